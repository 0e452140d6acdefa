import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { titleWith, type FormErrors } from './console-forms.js';
import type { ConsolePages } from './console-pages.js';
import { CONSOLE, segment } from './console-paths.js';
import type { ConsoleVisit } from './console-visit.js';
import { CLIENT_AUTH_METHODS, type FromFiles, type IdentityProviderForm, type IdentityProviderView } from './identity-provider-form.js';

export const PROVIDERS = `${CONSOLE}/identity-providers`;

export function providerPath(id: string): string {
  return `${PROVIDERS}/${segment(id)}`;
}

export const PROTOCOL_NAMES = { oidc: 'OpenID Connect', saml: 'SAML 2.0' } as const;
const A_PROVIDER = { oidc: 'an OpenID Connect provider', saml: 'a SAML 2.0 provider' } as const;

/** The form that adds a provider (`current` undefined) or changes one, with its problems beside their fields. */
export function providerFormPage(pages: ConsolePages, visit: ConsoleVisit, form: IdentityProviderForm, current: IdentityProviderView | undefined, files: FromFiles, errors: FormErrors, status = 200): Promise<InteractionOutcome> {
  const heading = current === undefined ? `Add ${A_PROVIDER[form.protocol]}` : `Edit ${current.name}`;
  const data = {
    heading,
    values: form,
    current,
    files,
    errors,
    methods: CLIENT_AUTH_METHODS,
    protocolName: PROTOCOL_NAMES[form.protocol],
    action: current === undefined ? PROVIDERS : `${providerPath(current.id)}/edit`,
    cancel: current === undefined ? PROVIDERS : providerPath(current.id),
  };
  return pages.page(visit, 'identity-provider-form', titleWith(errors, heading), data, { section: PROVIDERS, status });
}
