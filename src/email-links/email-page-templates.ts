/**
 * The email pages' templates (Eta, auto-escaped), in the shared layout of views/layout.eta. Kept
 * here rather than in views/ so that the whole feature is one folder; loaded as named templates.
 */
export const FORM_TEMPLATE = `<% layout('./layout') %>
<h1 id="page-title"><%= it.title %></h1>
<% for (const paragraph of it.intro) { %><p><%= paragraph %></p>
<% } %>
<% if (it.error) { %><div class="alert" role="alert" id="form-error"><%= it.error %></div>
<% } %>
<form method="post" action="<%= it.action %>" class="stack" novalidate>
  <input type="hidden" name="csrf_token" value="<%= it.csrfToken %>">
<% for (const field of it.hidden) { %>  <input type="hidden" name="<%= field.name %>" value="<%= field.value %>">
<% } %>
<% for (const [index, field] of it.fields.entries()) { %>  <div class="field">
    <label for="<%= field.name %>"><%= field.label %></label>
    <input id="<%= field.name %>" name="<%= field.name %>" type="<%= field.type %>" autocomplete="<%= field.autocomplete %>" autocapitalize="none" spellcheck="false" required value="<%= field.value ?? '' %>"<% if (index === 0) { %> autofocus<% } %><% if (it.error) { %> aria-describedby="form-error" aria-invalid="true"<% } %>>
  </div>
<% } %>
  <button type="submit" class="primary"><%= it.submit %></button>
</form>
<% for (const note of it.notes) { %><p class="note"><%= note %></p>
<% } %>
<% if (it.back) { %><p><a href="<%= it.back.href %>"><%= it.back.label %></a></p><% } %>
`;

export const MESSAGE_TEMPLATE = `<% layout('./layout') %>
<h1 id="page-title"><%= it.title %></h1>
<% if (it.alert) { %><div class="alert" role="alert"><p><%= it.alert %></p></div>
<% } %>
<% if (it.status) { %><p class="notice" role="status"><%= it.status %></p>
<% } %>
<% for (const paragraph of it.paragraphs) { %><p><%= paragraph %></p>
<% } %>
<% if (it.link) { %><p><a class="button primary" href="<%= it.link.href %>"><%= it.link.label %></a></p><% } %>
`;
