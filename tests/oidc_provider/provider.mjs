// A real OpenID Connect provider for the browser test (panva/oidc-provider, dev interactions:
// any login name signs in as that account; email = NAME@example.com, verified).
import Provider from 'oidc-provider';
const port = Number(process.env.OP_PORT || 9400);
const issuer = `http://localhost:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: 'layout-advisor', client_secret: process.env.OP_CLIENT_SECRET,
    redirect_uris: [process.env.OP_REDIRECT], post_logout_redirect_uris: [process.env.OP_REDIRECT],
    response_types: ['code'],
    grant_types: ['authorization_code'], token_endpoint_auth_method: 'client_secret_post',
  }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false,
  findAccount: async (ctx, id) => ({
    accountId: id,
    async claims() { return { sub: id, email: `${id}@example.com`, email_verified: true, name: id }; },
  }),
  features: { devInteractions: { enabled: true } },
});
provider.listen(port, () => console.log(`oidc provider at ${issuer}`));
