/* global window, document */
// Latchkey's passkey ceremonies (issue 33), served from our own origin with @simplewebauthn/browser
// (/assets/simplewebauthn-browser.js, loaded before this file, defines window.SimpleWebAuthnBrowser).
// Posts JSON to the server's ceremony endpoints with the page's CSRF token; nothing else.
(function () {
  'use strict';
  var webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn) return;

  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (json) {
        return { ok: response.ok, body: json };
      });
    });
  }

  function refused(result, fallback) {
    return new Error((result.body && result.body.error_description) || fallback);
  }

  function show(element, error) {
    element.textContent = error && error.message ? error.message : 'Something went wrong. Please try again.';
    element.hidden = false;
  }

  // The person cancelled the browser's dialog, or another ceremony replaced this one: nothing to say.
  function cancelled(error) {
    return error && (error.name === 'AbortError' || error.name === 'NotAllowedError' || error.code === 'ERROR_CEREMONY_ABORTED');
  }

  function setUpSignIn() {
    var button = document.getElementById('passkey-sign-in');
    // The page's sign-in form carries the CSRF token and where to go next; where there is none (the
    // account page of a person who has a passkey, confirmed by a passkey only), the button does.
    var form = document.querySelector('form[action="/login"]');
    if (!button || !webauthn.browserSupportsWebAuthn()) return;
    var csrf = form ? form.querySelector('input[name="csrf_token"]').value : button.getAttribute('data-csrf-token');
    var returnTo = form ? form.querySelector('input[name="return_to"]').value : button.getAttribute('data-return-to');
    if (!csrf || !returnTo) return;
    var error = document.getElementById('passkey-error');
    // One options request at a time: the session cookie names the latest challenge only.
    var queue = Promise.resolve();

    function signIn(autofill) {
      var options = queue.then(function () {
        return postJson('/login/passkey/options', { csrf_token: csrf });
      });
      queue = options.catch(function () {});
      return options
        .then(function (result) {
          if (!result.ok) throw refused(result, 'Passkey sign-in is not available now.');
          return webauthn.startAuthentication({ optionsJSON: result.body, useBrowserAutofill: autofill });
        })
        .then(function (response) {
          return postJson('/login/passkey', { csrf_token: csrf, return_to: returnTo, response: response });
        })
        .then(function (result) {
          if (!result.ok || !result.body.location) {
            var answer = refused(result, 'This passkey was not accepted.');
            answer.signInRefused = true;
            throw answer;
          }
          window.location.assign(result.body.location);
        });
    }

    button.hidden = false;
    button.addEventListener('click', function () {
      error.hidden = true;
      signIn(false).catch(function (e) {
        if (!cancelled(e)) show(error, e);
      });
    });
    // Conditional mediation: the browser offers passkeys in the username field's autofill (the sign-in page has one).
    if (!document.querySelector('input[autocomplete~="webauthn"]')) return;
    webauthn.browserSupportsWebAuthnAutofill().then(function (supported) {
      // The server's refusal of a passkey the person chose says why (one blocked because a copy was
      // detected, say). Nothing else is shown: the person asked for nothing yet, and the browser's own
      // failures of this background request (cancelled, replaced, or no passkeys for this origin) are not theirs to fix.
      if (supported) signIn(true).catch(function (e) {
        if (e && e.signInRefused) show(error, e);
      });
    });
  }

  function setUpAccount() {
    var form = document.getElementById('passkey-add');
    if (!form) return;
    var error = document.getElementById('passkey-error');
    if (!webauthn.browserSupportsWebAuthn()) {
      show(error, new Error('This browser cannot create passkeys.'));
      return;
    }
    var csrf = form.querySelector('input[name="csrf_token"]').value;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      error.hidden = true;
      var name = form.querySelector('input[name="name"]').value.trim();
      if (!name) return show(error, new Error('Give the passkey a name.'));
      postJson('/account/passkeys/registration/options', { csrf_token: csrf })
        .then(function (result) {
          if (!result.ok) throw refused(result, 'A passkey cannot be added now.');
          return webauthn.startRegistration({ optionsJSON: result.body });
        })
        .then(function (response) {
          return postJson('/account/passkeys/registration', { csrf_token: csrf, name: name, response: response });
        })
        .then(function (result) {
          if (!result.ok || !result.body.location) throw refused(result, 'The passkey was not added.');
          window.location.assign(result.body.location);
        })
        .catch(function (e) {
          show(error, cancelled(e) ? new Error('No passkey was added.') : e);
        });
    });
  }

  setUpSignIn();
  setUpAccount();
})();
