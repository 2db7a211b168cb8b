//! `--auth-jwks FILE_OR_URL --auth-issuer ISS --auth-audience AUD [--auth-resource URL]`, which
//! the example servers share: protect the Streamable HTTP endpoint as an OAuth 2.1 resource
//! server with the built-in JWT verifier (guide: docs/src/authorization.md;
//! `mcpcore::auth::AuthOptions`) without writing the JSON file `--auth FILE` takes. With
//! `--redis`, every worker started with the same flags accepts the same tokens.

use mcpcore::auth::AuthOptions;
use mcpcore::transport::http::HttpOptions;

/// Usage lines for the flags.
pub const USAGE: &str = concat!(
    "  --auth-jwks FILE_OR_URL  protect the endpoint: verify JWT bearer tokens with this JWKS (a file, or an\n",
    "                           https:// URL; http:// on loopback only); needs --auth-issuer and --auth-audience\n",
    "  --auth-issuer ISS        the issuer (iss) tokens must carry; the authorization server the metadata names\n",
    "  --auth-audience AUD      the audience (aud) tokens must carry; also the resource identifier (an absolute\n",
    "                           URL such as https://mcp.example.com/mcp) unless --auth-resource names it\n",
    "  --auth-resource URL      the resource identifier of the protected-resource metadata (default: AUD)\n",
);

const FLAGS: [&str; 4] = [
    "--auth-jwks",
    "--auth-issuer",
    "--auth-audience",
    "--auth-resource",
];

/// Remove the `--auth-*` flags from `args` and, when given, set `opts.auth`. Returns the
/// remaining arguments and whether any of them was given.
///
/// # Errors
/// A flag without a value, an incomplete set (the first three go together), `--auth FILE` as
/// well, options the verifier refuses (an unreadable JWKS file, plain `http://` off loopback,
/// a resource that is no absolute URL).
pub fn take(args: Vec<String>, opts: &mut HttpOptions) -> Result<(Vec<String>, bool), String> {
    let mut rest = Vec::new();
    let mut values: [Option<String>; 4] = Default::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let Some(i) = FLAGS.iter().position(|f| *f == a) else {
            rest.push(a);
            continue;
        };
        values[i] = Some(it.next().ok_or_else(|| format!("{a} needs a value"))?);
    }
    let [jwks, issuer, audience, resource] = values;
    let given = jwks.is_some() || issuer.is_some() || audience.is_some() || resource.is_some();
    if !given {
        return Ok((rest, false));
    }
    let (Some(jwks), Some(issuer), Some(audience)) = (jwks, issuer, audience) else {
        return Err("--auth-jwks, --auth-issuer and --auth-audience go together".into());
    };
    if opts.auth.is_some() {
        return Err("--auth FILE and the --auth-* flags are exclusive".into());
    }
    let resource = resource.unwrap_or_else(|| audience.clone());
    let a = AuthOptions::jwt(resource, issuer, audience, jwks);
    // Build once now so a bad file or URL is a usage error, not a failure to listen.
    a.build_verifier()
        .map_err(|e| format!("--auth-jwks/--auth-issuer/--auth-audience: {e}"))?;
    opts.auth = Some(a);
    Ok((rest, true))
}
