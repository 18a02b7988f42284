//! Which `Host` and `Origin` headers the HTTP transport answers: its guard against DNS rebinding.
//!
//! A page on another site, whose name the attacker points at 127.0.0.1, can make a visitor's
//! browser send requests to a server on the visitor's machine. The browser then names the
//! attacker's host in `Host` and the page's origin in `Origin`; refusing hosts and origins the
//! server does not know is what keeps its tools out of reach. Loopback names are always
//! accepted; an origin on an accepted host is the server's own (a page it serves, or a local
//! tool); other origins only when listed.

use hyper::HeaderMap;
use hyper::Uri;
use hyper::http::uri::{Authority, Scheme};

/// The host names every server accepts.
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// An accepted `Host`: a name, on any port or on one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostRule {
    host: String,
    port: Option<u16>,
}

impl HostRule {
    /// `name` or `name:port`.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (host, port) = authority(text.trim())
            .ok_or_else(|| format!("lists `{text}`, which is not HOST or HOST:PORT"))?;
        Ok(HostRule { host, port })
    }

    fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host == host && self.port.is_none_or(|allowed| port == Some(allowed))
    }

    /// As rmcp's allow-list reads it.
    fn to_rmcp(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", bracketed(&self.host)),
            None => self.host.clone(),
        }
    }
}

/// An accepted `Origin` besides those of the accepted hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OriginRule {
    /// `null`: what a browser sends from a sandboxed page or a `file:` URL.
    Null,
    /// `scheme://host`, `scheme://host:port` or `scheme://host:*`.
    Site {
        scheme: String,
        host: String,
        /// `None` for any port.
        port: Option<u16>,
    },
}

impl OriginRule {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let refused = || {
            format!(
                "lists `{text}`, which is not an origin like `https://app.example.com`, \
                 `http://localhost:3000`, `http://localhost:*` or `null`"
            )
        };
        if text.eq_ignore_ascii_case("null") {
            return Ok(OriginRule::Null);
        }
        let (base, any_port) = match text.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (text, false),
        };
        let Some(Origin::Site { scheme, host, port }) = Origin::parse(base) else {
            return Err(refused());
        };
        let port = match (any_port, port) {
            (true, None) => None,
            (true, Some(_)) => return Err(refused()),
            (false, port) => Some(port.or_else(|| default_port(&scheme)).ok_or_else(refused)?),
        };
        Ok(OriginRule::Site { scheme, host, port })
    }

    fn matches(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (OriginRule::Null, Origin::Null) => true,
            (
                OriginRule::Site { scheme, host, port },
                Origin::Site {
                    scheme: their_scheme,
                    host: their_host,
                    port: their_port,
                },
            ) => {
                scheme == their_scheme
                    && host == their_host
                    && port.is_none_or(|port| {
                        their_port.or_else(|| default_port(their_scheme)) == Some(port)
                    })
            }
            _ => false,
        }
    }

    /// As rmcp's allow-list reads it.
    fn to_rmcp(&self) -> String {
        match self {
            OriginRule::Null => "null".to_owned(),
            OriginRule::Site { scheme, host, port } => {
                let port = port.map_or_else(|| "*".to_owned(), |port| port.to_string());
                format!("{scheme}://{}:{port}", bracketed(host))
            }
        }
    }
}

/// An `Origin` header's value.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Site {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    /// `scheme://host[:port]` (nothing after it), or `null`.
    fn parse(text: &str) -> Option<Origin> {
        if text.eq_ignore_ascii_case("null") {
            return Some(Origin::Null);
        }
        let uri: Uri = text.parse().ok()?;
        let scheme = uri.scheme().map(Scheme::as_str)?.to_ascii_lowercase();
        if uri
            .path_and_query()
            .is_some_and(|path| path.as_str() != "/")
        {
            return None;
        }
        let (host, port) = authority(uri.authority()?.as_str())?;
        Some(Origin::Site { scheme, host, port })
    }
}

/// Why a request's `Host` or `Origin` is not answered.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No `Host`, several, or one that is not a host (status 400).
    BadHost(String),
    /// A host the server does not answer to (status 403).
    Host(String),
    /// An origin the server does not answer (status 403).
    Origin(String),
}

impl Refusal {
    pub(crate) fn status(&self) -> hyper::StatusCode {
        match self {
            Refusal::BadHost(_) => hyper::StatusCode::BAD_REQUEST,
            Refusal::Host(_) | Refusal::Origin(_) => hyper::StatusCode::FORBIDDEN,
        }
    }

    pub(crate) fn message(&self) -> String {
        match self {
            Refusal::BadHost(why) => format!("Bad Request: {why}"),
            Refusal::Host(host) => {
                format!("Forbidden: this server does not answer to the host `{host}`")
            }
            Refusal::Origin(origin) => {
                format!("Forbidden: requests from the origin `{origin}` are not allowed")
            }
        }
    }
}

/// The hosts and origins a server answers.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    hosts: Vec<HostRule>,
    origins: Vec<OriginRule>,
}

impl Guard {
    /// The loopback names and a configuration's `allowed_hosts` and `allowed_origins` (checked
    /// by `McpConfig::check`; one that does not read is left out).
    pub(crate) fn new(allowed_hosts: &[String], allowed_origins: &[String]) -> Self {
        let loopback = LOOPBACK_HOSTS.iter().map(|host| HostRule {
            host: (*host).to_owned(),
            port: None,
        });
        let extra = allowed_hosts
            .iter()
            .filter_map(|host| HostRule::parse(host).ok());
        Guard {
            hosts: loopback.chain(extra).collect(),
            origins: allowed_origins
                .iter()
                .filter_map(|origin| OriginRule::parse(origin).ok())
                .collect(),
        }
    }

    /// Whether a request with `uri` and `headers` may be answered.
    pub(crate) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut hosts = headers.get_all(hyper::header::HOST).iter();
        let (host, port) = match (hosts.next(), hosts.next()) {
            (Some(_), Some(_)) => {
                return Err(Refusal::BadHost("more than one Host header".to_owned()));
            }
            (Some(value), None) => {
                let text = value.to_str().unwrap_or_default();
                authority(text).ok_or_else(|| {
                    Refusal::BadHost(format!("the Host header `{}` is not a host", shown(value)))
                })?
            }
            // HTTP/2 names the host in the request's `:authority`.
            (None, _) => uri
                .authority()
                .and_then(|authority| self::authority(authority.as_str()))
                .ok_or_else(|| Refusal::BadHost("no Host header".to_owned()))?,
        };
        if !self.hosts.iter().any(|rule| rule.matches(&host, port)) {
            return Err(Refusal::Host(host));
        }
        let mut origins = headers.get_all(hyper::header::ORIGIN).iter();
        let origin = match (origins.next(), origins.next()) {
            (None, _) => return Ok(()),
            (Some(value), None) => value,
            (Some(value), Some(_)) => return Err(Refusal::Origin(shown(value))),
        };
        let allowed = origin
            .to_str()
            .ok()
            .and_then(Origin::parse)
            .is_some_and(|origin| self.allows(&origin));
        if allowed {
            Ok(())
        } else {
            Err(Refusal::Origin(shown(origin)))
        }
    }

    fn allows(&self, origin: &Origin) -> bool {
        let on_an_allowed_host = match origin {
            Origin::Site { host, .. } => self.hosts.iter().any(|rule| &rule.host == host),
            Origin::Null => false,
        };
        on_an_allowed_host || self.origins.iter().any(|rule| rule.matches(origin))
    }

    /// The allowed hosts, as rmcp's service checks them.
    pub(crate) fn rmcp_hosts(&self) -> Vec<String> {
        self.hosts.iter().map(HostRule::to_rmcp).collect()
    }

    /// The allowed origins, as rmcp's service checks them: any port on an allowed host, and
    /// the listed origins.
    pub(crate) fn rmcp_origins(&self) -> Vec<String> {
        let own = self.hosts.iter().flat_map(|rule| {
            ["http", "https"].map(|scheme| format!("{scheme}://{}:*", bracketed(&rule.host)))
        });
        own.chain(self.origins.iter().map(OriginRule::to_rmcp))
            .collect()
    }
}

/// `host` or `host:port` as a lowercase host without brackets, and the port.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let authority: Authority = text.parse().ok()?;
    // An authority may carry `user@`; a Host header never does.
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return None;
    }
    // `Authority` reads a port that is not a number as no port.
    let text = authority.as_str();
    let port = match text.rsplit_once(':') {
        Some((_, port)) if !text.ends_with(']') => Some(port.parse::<u16>().ok()?),
        _ => None,
    };
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Some((host, port))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// An IPv6 address in brackets, as a URL writes it; any other host as it is.
fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// A header value as text to quote in a message, at most 100 characters of it.
fn shown(value: &hyper::header::HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes())
        .chars()
        .take(100)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn guard(hosts: &[&str], origins: &[&str]) -> Guard {
        let owned = |names: &[&str]| {
            names
                .iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>()
        };
        Guard::new(&owned(hosts), &owned(origins))
    }

    fn check(guard: &Guard, host: &str, origin: Option<&str>) -> Result<(), Refusal> {
        let mut headers = HeaderMap::new();
        headers.insert(hyper::header::HOST, host.parse().unwrap());
        if let Some(origin) = origin {
            headers.insert(hyper::header::ORIGIN, origin.parse().unwrap());
        }
        guard.check(&Uri::from_static("/mcp"), &headers)
    }

    #[test]
    fn loopback_hosts_are_answered_on_any_port_and_listed_hosts_besides() {
        let guard = guard(&["mcp.example.com", "api.example.com:8443"], &[]);
        for host in [
            "localhost:8080",
            "127.0.0.1",
            "[::1]:9",
            "LOCALHOST:1",
            "mcp.example.com:80",
        ] {
            assert_eq!(check(&guard, host, None), Ok(()), "{host}");
        }
        assert_eq!(check(&guard, "api.example.com:8443", None), Ok(()));
        assert_eq!(
            check(&guard, "api.example.com:8080", None),
            Err(Refusal::Host("api.example.com".into()))
        );
        assert_eq!(
            check(&guard, "evil.example:80", None),
            Err(Refusal::Host("evil.example".into()))
        );
    }

    #[test]
    fn origins_on_allowed_hosts_are_answered_and_others_only_when_listed() {
        let guard = guard(
            &["mcp.example.com"],
            &[
                "https://app.example.com",
                "http://dev.example.com:*",
                "null",
            ],
        );
        let allowed = [
            "http://localhost:6274",
            "http://127.0.0.1",
            "https://[::1]:3000",
            "https://mcp.example.com",
            "https://app.example.com",
            "https://app.example.com:443",
            "http://dev.example.com:5173",
            "null",
        ];
        for origin in allowed {
            assert_eq!(check(&guard, "localhost", Some(origin)), Ok(()), "{origin}");
        }
        let refused = [
            "http://evil.com",
            "https://app.example.com:8443",
            "http://app.example.com",
            "http://localhost.evil.com",
            "not an origin",
            "http://localhost/path",
        ];
        for origin in refused {
            assert_eq!(
                check(&guard, "localhost", Some(origin)),
                Err(Refusal::Origin(origin.into())),
                "{origin}"
            );
        }
    }

    #[test]
    fn a_null_origin_is_refused_unless_listed() {
        assert!(check(&guard(&[], &[]), "localhost", Some("null")).is_err());
    }

    #[test]
    fn rules_that_do_not_read_are_refused() {
        for host in ["", "a b", "user@host", "host:port", "host:99999"] {
            assert!(HostRule::parse(host).is_err(), "{host}");
        }
        for origin in [
            "example.com",
            "https://a.example/x",
            "https://a.example:1:*",
            "ftp://x",
        ] {
            assert!(OriginRule::parse(origin).is_err(), "{origin}");
        }
    }

    #[test]
    fn rmcp_is_given_the_same_rules() {
        let guard = guard(&["api.example.com:8443"], &["https://app.example.com"]);
        assert_eq!(
            guard.rmcp_hosts(),
            ["localhost", "127.0.0.1", "::1", "api.example.com:8443"]
        );
        let origins = guard.rmcp_origins();
        assert!(
            origins.contains(&"http://[::1]:*".to_owned()),
            "{origins:?}"
        );
        assert!(
            origins.contains(&"https://app.example.com:443".to_owned()),
            "{origins:?}"
        );
    }
}
