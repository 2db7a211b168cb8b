//! In-process tests of the task engine.
