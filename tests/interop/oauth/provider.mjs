// A real OAuth 2.1 / OpenID Connect authorization server for mcpkit's OAuth interop tests:
// `oidc-provider` (OpenID-certified, from npm) on loopback, configured for ONE protected
// resource (an MCP endpoint).  Development and tests only: plain http, dev login/consent
// pages that accept any user and password, in-memory storage, a throwaway signing key.
//
//   node provider.mjs --resource http://127.0.0.1:9999/mcp --scopes "notes:read notes:write" \
//     [--port 0] [--token-format jwt|opaque]
//
// Prints `READY <issuer>` on stdout once it listens on 127.0.0.1 (port 0: any free port);
// exits on SIGTERM or SIGINT.  tests/interop/oauth/conftest.py installs the package, runs a
// copy of this file next to its node_modules, and drives it.

import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values: options } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    resource: { type: 'string' },
    scopes: { type: 'string', default: 'notes:read notes:write' },
    // `jwt` (RFC 9068, verified with the JWKS) or `opaque` (checked by RFC 7662 introspection:
    // oidc-provider refuses to introspect its own JWT access tokens).
    'token-format': { type: 'string', default: 'jwt' },
  },
});

const RESOURCE = options.resource ?? process.env.OAUTH_RESOURCE;
const RESOURCE_SCOPES = (options.scopes ?? '').split(' ').filter(Boolean);
const TOKEN_FORMAT = options['token-format'];
if (!RESOURCE || !URL.canParse(RESOURCE) || !['jwt', 'opaque'].includes(TOKEN_FORMAT)) {
  console.error('usage: provider.mjs --resource URL [--scopes "a b"] [--port N] [--token-format jwt|opaque]');
  process.exit(2);
}

// Pre-registered confidential clients (conftest.py names the same ids and secrets).  The
// resource scopes each may receive: svc-reader is down-scoped to notes:read, whatever it asks
// for; a dynamically registered client (not listed) may receive every resource scope.
const RESOURCE_SCOPES_OF = {
  'svc-reader': RESOURCE_SCOPES.filter((scope) => scope === 'notes:read'),
  'svc-writer': RESOURCE_SCOPES,
};
const serviceClient = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
});
const clients = [
  serviceClient('svc-reader'),
  serviceClient('svc-writer'),
  // The resource server's own credentials, for the RFC 7662 introspection endpoint only.
  { ...serviceClient('mcp-resource'), grant_types: [] },
];

// A fresh RS256 signing key per run (public half at /jwks).
const signingKey = {
  ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg: 'RS256',
  use: 'sig',
};

const HOUR = 60 * 60;

const configuration = {
  clients,
  jwks: { keys: [signingKey] },
  cookies: { keys: ['harness-cookie-key-not-secret'] },
  // The resource scopes are listed too: discovery advertises them, and dynamic registration
  // accepts a client `scope` only from this list (the MCP client registers with one).
  scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES],
  responseTypes: ['code'],
  // PKCE for every authorization code request, public client or not (S256 is the only method).
  pkce: { required: () => true },
  ttl: {
    AccessToken: HOUR,
    AuthorizationCode: 60,
    ClientCredentials: HOUR,
    Grant: HOUR,
    IdToken: HOUR,
    Interaction: HOUR,
    RefreshToken: HOUR,
    Session: HOUR,
  },
  features: {
    // Login and consent HTML forms served by the provider itself: any login, any password.
    devInteractions: { enabled: true },
    // RFC 7591, open: no initial access token.
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      allowedPolicy: (ctx, client) => client.clientId === 'mcp-resource',
    },
    revocation: { enabled: true },
    // RFC 8707: every access token is for RESOURCE, asked for by name or not.
    resourceIndicators: {
      enabled: true,
      // No `resource` parameter: the granted one (oneOf), else RESOURCE.
      defaultResource: (ctx, client, oneOf) => oneOf ?? RESOURCE,
      // A token request without `resource` gets a token for the resource the user granted.
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, indicator, client) {
        if (indicator !== RESOURCE) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        const allowed = RESOURCE_SCOPES_OF[client.clientId] ?? RESOURCE_SCOPES;
        const { grant_type: grantType, scope } = ctx.oidc.params ?? {};
        // A client_credentials request none of whose scopes the client may have is refused
        // (an AS may otherwise narrow the scope silently, which it does for the others).
        const requested = (grantType === 'client_credentials' && scope) ? scope.split(' ') : [];
        if (requested.length && !requested.some((s) => allowed.includes(s))) {
          throw new errors.InvalidScope('requested scope is not allowed for this client', scope);
        }
        return {
          scope: allowed.join(' '),
          audience: RESOURCE,
          accessTokenTTL: HOUR,
          accessTokenFormat: TOKEN_FORMAT,
          ...(TOKEN_FORMAT === 'jwt' ? { jwt: { sign: { alg: 'RS256' } } } : {}),
        };
      },
    },
  },
};

// Listen first (port 0 picks one), then build the provider for the issuer that port makes.
const server = createServer();
server.listen(Number(options.port), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  console.log(`READY ${issuer}`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
