//! What commands read besides their own flags: algorithm names, configuration files and
//! scenes.

pub mod algorithms;
pub mod config;
pub mod scene;
