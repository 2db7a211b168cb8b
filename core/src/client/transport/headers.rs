//! Modern HTTP request headers (REQUIREMENTS HTTP-10, HTTP-14, HTTP-15, HTTP-16). The rules live
//! once, in [`crate::protocol::mcp_header`], shared with the server; they are re-exported here,
//! where the client first published them.

pub use crate::protocol::mcp_header::{
    declarations as tool_param_headers, encode_value, param_headers, ParamHeader,
};
