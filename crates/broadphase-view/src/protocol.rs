//! The page's commands and the server's text messages.
//!
//! Commands are small JSON texts, one per WebSocket message, named by `cmd`. The server
//! answers every command: with a binary frame ([`crate::frame`]) when there is a state to
//! show, or with a JSON text: `{"type":"hello",…}` when a stream opens or a scene restarts,
//! `{"type":"error","message":…}` for a command it refuses (the stream and the server go on,
//! and the running scene is kept).
//!
//! The page sends the next `step` or `advance` only once the previous frame has arrived,
//! so frames never queue up: a slow page or a slow algorithm lowers the frame rate instead
//! of filling memory.

use serde::Deserialize;

/// What the page can ask of a discrete scene.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "cmd", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    /// Restarts the scene with the same seed; unset fields keep their value.
    Start {
        /// One of `broadphase::ALGORITHMS`.
        algorithm: Option<String>,
        /// Objects in the scene.
        objects: Option<usize>,
        /// Mean speed, units per second.
        mean_speed: Option<f32>,
    },
    /// Runs `count` steps (1 when unset) and sends the frame of the last.
    Step {
        /// Steps to run, at most [`MAX_STEPS_PER_COMMAND`].
        count: Option<u32>,
    },
    /// Sends the current state again (after an overlay change, or a lost frame).
    Frame,
    /// Chooses what the frames carry besides the boxes.
    Overlay {
        /// The algorithm's structure.
        structure: bool,
        /// Deepest tree level drawn (BVH, dynamic tree, octrees).
        depth: Option<u32>,
    },
}

/// What the page can ask of the continuous-time simulation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "cmd", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CcdCommand {
    /// Restarts the simulation with the same seed; unset fields keep their value.
    Start {
        /// `all-pairs`, `swept-bvh` or `calendar`.
        method: Option<String>,
        /// Bodies.
        objects: Option<usize>,
        /// 2 (circles) or 3 (spheres).
        dim: Option<usize>,
    },
    /// Moves simulated time forward by `dt` seconds, applying the events on the way, and
    /// sends the frame at the new time.
    Advance {
        /// Simulated seconds, finite and in `[0, MAX_ADVANCE]`.
        dt: f64,
        /// What the frame draws besides the bodies: `none`, `swept` (the swept-bvh
        /// method's boxes) or `cells` (the calendar's grid).
        overlay: Option<String>,
    },
}

/// Most steps one command may run: a typo of the page would otherwise keep the stream's
/// thread busy for minutes.
pub const MAX_STEPS_PER_COMMAND: u32 = 1000;

/// Most simulated seconds one `advance` may cover.
pub const MAX_ADVANCE: f64 = 60.0;

/// Parses a command text; the error is one line for the page.
pub fn parse<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("malformed command: {e}"))
}

/// The JSON text of an error message.
pub fn error_message(message: &str) -> String {
    serde_json::json!({ "type": "error", "message": message }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(
            parse::<Command>(r#"{"cmd":"step","count":3}"#),
            Ok(Command::Step { count: Some(3) })
        );
        assert_eq!(
            parse::<Command>(r#"{"cmd":"start","algorithm":"sap"}"#),
            Ok(Command::Start {
                algorithm: Some("sap".into()),
                objects: None,
                mean_speed: None
            })
        );
        assert!(parse::<Command>(r#"{"cmd":"fly"}"#).is_err());
        assert!(parse::<Command>(r#"{"cmd":"step","count":-1}"#).is_err());
        assert!(parse::<Command>(r#"{"cmd":"step","extra":1}"#).is_err());
        assert!(parse::<CcdCommand>(r#"{"cmd":"advance","dt":0.1}"#).is_ok());
        assert!(parse::<CcdCommand>("\u{0}\u{ff}").is_err());
    }
}
