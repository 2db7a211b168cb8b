//! JSON-RPC 2.0 framing and message classification (REQUIREMENTS JR-01 … JR-03, JR-06).
//!
//! Every inbound frame is parsed exactly once into a [`serde_json::Value`] and classified into an
//! [`Incoming`]. Nothing here panics on peer-controlled input.

pub mod codec;
mod message;

pub use message::{
    classify, encode_error, encode_notification, encode_request, encode_result, parse_frame, Id,
    Incoming, ParsedFrame,
};

#[cfg(test)]
mod props;
#[cfg(test)]
pub(crate) mod props_gen;
#[cfg(test)]
mod props_msgs;
