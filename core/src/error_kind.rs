//! `kind()` of every public error type: the one table that says which [`ErrorKind`] each
//! variant is, kept in one place so the classification stays consistent across types.

use crate::client::ClientError;
use crate::error::{ErrorKind, HandlerError};
use crate::limits::LimitError;
use crate::options::OptionsError;
use crate::runtime::RuntimeError;
use crate::security::sealing::KeyError;
use crate::server::{BuildError, PeerError};
use crate::transport::stdio::StdioError;

impl HandlerError {
    /// [`ErrorKind::Rpc`] for a chosen JSON-RPC error, [`ErrorKind::Internal`] otherwise.
    pub fn kind(&self) -> ErrorKind {
        match self {
            HandlerError::Rpc(_) => ErrorKind::Rpc,
            HandlerError::Internal(_) => ErrorKind::Internal,
            HandlerError::Cancelled => ErrorKind::Cancelled,
        }
    }
}

impl ClientError {
    /// The classification of this failure (see [`ErrorKind`]). An ended legacy HTTP session
    /// that could not be renewed (LHTTP-02) is a transport failure: the next call starts a new
    /// session. `structuredContent` that breaks the tool's `outputSchema` (TOOL-06) is the
    /// server breaking the protocol.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ClientError::Rpc(_) => ErrorKind::Rpc,
            ClientError::Timeout => ErrorKind::Timeout,
            ClientError::Cancelled => ErrorKind::Cancelled,
            ClientError::Closed(_) => ErrorKind::Closed,
            ClientError::Transport(_) | ClientError::SessionExpired(_) | ClientError::Auth(_) => {
                ErrorKind::Transport
            }
            ClientError::Protocol(_) | ClientError::OutputValidation(_) => ErrorKind::Protocol,
            ClientError::InvalidArgument(_) => ErrorKind::InvalidArgument,
            ClientError::InputRequired(_) => ErrorKind::InputRequired,
        }
    }
}

impl PeerError {
    /// The classification of this failure (see [`ErrorKind`]): a missing client capability
    /// and a server→client request on a 2026-07-28 request (JR-05) are
    /// [`ErrorKind::Unsupported`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            PeerError::Timeout => ErrorKind::Timeout,
            PeerError::Cancelled => ErrorKind::Cancelled,
            PeerError::Closed => ErrorKind::Closed,
            PeerError::Rpc(_) => ErrorKind::Rpc,
            PeerError::MissingCapability(_) | PeerError::NotAllowed => ErrorKind::Unsupported,
            PeerError::InputRequired(_) => ErrorKind::InputRequired,
            PeerError::Unavailable(_) => ErrorKind::Unsupported,
        }
    }
}

impl StdioError {
    /// The classification of this failure (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            StdioError::FrameTooLarge(_) => ErrorKind::LimitExceeded,
            StdioError::Io(_) => ErrorKind::Transport,
            StdioError::Limit(_) => ErrorKind::InvalidArgument,
        }
    }
}

impl OptionsError {
    /// [`ErrorKind::InvalidJson`] for a shape error (not an object, unknown key, wrong type),
    /// [`ErrorKind::InvalidArgument`] for a value out of range.
    pub fn kind(&self) -> ErrorKind {
        match self {
            OptionsError::Shape(_) => ErrorKind::InvalidJson,
            OptionsError::Range(_) => ErrorKind::InvalidArgument,
        }
    }
}

impl BuildError {
    /// Always [`ErrorKind::InvalidArgument`]: a registration or option was refused.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

impl LimitError {
    /// Always [`ErrorKind::InvalidArgument`]: a limit would disable its protection.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

impl KeyError {
    /// [`ErrorKind::InvalidArgument`] for a refused key or ring, [`ErrorKind::Internal`] when
    /// the operating system's random source failed.
    pub fn kind(&self) -> ErrorKind {
        match self {
            KeyError::BadKey | KeyError::BadId | KeyError::TooMany => ErrorKind::InvalidArgument,
            KeyError::Random => ErrorKind::Internal,
        }
    }
}

impl RuntimeError {
    /// The classification of this failure (see [`ErrorKind`]): the operating system refusing
    /// the worker threads is a [`ErrorKind::Transport`] (OS resource) failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RuntimeError::WouldDeadlock => ErrorKind::WouldDeadlock,
            RuntimeError::ShutDown => ErrorKind::Closed,
            RuntimeError::Start(_) => ErrorKind::Transport,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorObject;
    use ErrorKind as K;

    fn io() -> std::io::Error {
        std::io::Error::other("x")
    }

    #[test]
    fn handler_and_client_errors() {
        assert_eq!(HandlerError::rpc(-1, "x").kind(), K::Rpc);
        assert_eq!(HandlerError::invalid_params("x").kind(), K::Rpc);
        assert_eq!(HandlerError::internal("x").kind(), K::Internal);
        let cases = [
            (ClientError::Rpc(ErrorObject::internal()), K::Rpc),
            (ClientError::Timeout, K::Timeout),
            (ClientError::Cancelled, K::Cancelled),
            (ClientError::Closed("x".into()), K::Closed),
            (ClientError::Transport("x".into()), K::Transport),
            (ClientError::Protocol("x".into()), K::Protocol),
            (ClientError::InvalidArgument("x".into()), K::InvalidArgument),
            (
                ClientError::InputRequired(serde_json::json!({})),
                K::InputRequired,
            ),
            (ClientError::SessionExpired("x".into()), K::Transport),
            (ClientError::OutputValidation("x".into()), K::Protocol),
        ];
        for (e, k) in cases {
            assert_eq!(e.kind(), k, "{e:?}");
        }
    }

    #[test]
    fn server_side_errors() {
        let peer = [
            (PeerError::Timeout, K::Timeout),
            (PeerError::Cancelled, K::Cancelled),
            (PeerError::Closed, K::Closed),
            (PeerError::Rpc(ErrorObject::internal()), K::Rpc),
            (
                PeerError::MissingCapability("sampling".into()),
                K::Unsupported,
            ),
            (PeerError::NotAllowed, K::Unsupported),
        ];
        for (e, k) in peer {
            assert_eq!(e.kind(), k, "{e:?}");
        }
        let limit = LimitError {
            name: "max_inflight",
            reason: "must be positive",
        };
        assert_eq!(limit.kind(), K::InvalidArgument);
        assert_eq!(StdioError::FrameTooLarge(1).kind(), K::LimitExceeded);
        assert_eq!(StdioError::Io(io()).kind(), K::Transport);
        assert_eq!(StdioError::Limit(limit).kind(), K::InvalidArgument);
        for e in [
            BuildError::Schema {
                tool: "t".into(),
                reason: "r".into(),
            },
            BuildError::McpHeader {
                tool: "t".into(),
                reason: "r".into(),
            },
            BuildError::Duplicate("t".into()),
            BuildError::Template {
                template: "t".into(),
                reason: "r".into(),
            },
            BuildError::Option("o".into()),
        ] {
            assert_eq!(e.kind(), K::InvalidArgument, "{e:?}");
        }
    }

    #[test]
    fn option_codec_security_and_runtime_errors() {
        assert_eq!(OptionsError::Shape("x".into()).kind(), K::InvalidJson);
        assert_eq!(OptionsError::Range("x".into()).kind(), K::InvalidArgument);
        for e in [KeyError::BadKey, KeyError::BadId, KeyError::TooMany] {
            assert_eq!(e.kind(), K::InvalidArgument, "{e:?}");
        }
        assert_eq!(KeyError::Random.kind(), K::Internal);
        assert_eq!(RuntimeError::WouldDeadlock.kind(), K::WouldDeadlock);
        assert_eq!(RuntimeError::ShutDown.kind(), K::Closed);
        assert_eq!(RuntimeError::Start(io()).kind(), K::Transport);
    }
}
