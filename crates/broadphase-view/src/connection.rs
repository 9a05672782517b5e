//! One page's stream: reads its commands ([`crate::protocol`]) and answers each, with a
//! frame or a text message. A refused command gets an error message and changes nothing;
//! only the page closing the stream (or the stream breaking) ends it.

use std::io::{Read, Write};

use broadphase::ALGORITHMS;
use broadphase_sim::Scene;
use tungstenite::{Message, WebSocket};

use crate::ccd::{CcdOptions, CcdSession};
use crate::protocol::{self, CcdCommand, Command, MAX_ADVANCE, MAX_STEPS_PER_COMMAND};
use crate::server::ServerConfig;
use crate::session::Session;
use crate::MAX_OBJECTS;

/// Which page a stream serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The discrete scene (`/stream`).
    Discrete,
    /// The continuous-time simulation (`/ccd-stream`).
    Ccd,
}

/// Fastest mean speed a page may ask for, in world units per second: faster objects cross
/// the default world several times per step, which shows nothing.
pub const MAX_MEAN_SPEED: f32 = 1000.0;

/// Serves one stream until the page closes it or it breaks.
pub fn serve<S: Read + Write>(mut socket: WebSocket<S>, mode: Mode, config: &ServerConfig) {
    let result = match mode {
        Mode::Discrete => serve_discrete(&mut socket, config),
        Mode::Ccd => serve_ccd(&mut socket),
    };
    if let Err(e) = result {
        // A page that goes away, closing or not, is ordinary; other errors are worth a line.
        use tungstenite::Error as E;
        if !matches!(
            e,
            E::ConnectionClosed | E::AlreadyClosed | E::Io(_) | E::Protocol(_)
        ) {
            eprintln!("stream ended: {e}");
        }
    }
}

/// The next command's text; `None` once the page has closed the stream.
fn next_text<S: Read + Write>(socket: &mut WebSocket<S>) -> tungstenite::Result<Option<String>> {
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => return Ok(Some(text.as_str().to_owned())),
            Ok(Message::Binary(_)) => {
                let message = protocol::error_message("commands are JSON texts, not binary");
                socket.send(Message::text(message))?;
            }
            Ok(Message::Close(_)) => return Ok(None),
            Ok(_) => {}
            Err(tungstenite::Error::ConnectionClosed) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}

/// Sends `frame`; the buffer goes with the message, and the next frame grows a new one.
fn send_frame<S: Read + Write>(
    socket: &mut WebSocket<S>,
    frame: &mut Vec<u8>,
) -> tungstenite::Result<()> {
    let capacity = frame.capacity();
    let bytes = std::mem::replace(frame, Vec::with_capacity(capacity));
    socket.send(Message::binary(bytes))
}

fn send_error<S: Read + Write>(
    socket: &mut WebSocket<S>,
    message: &str,
) -> tungstenite::Result<()> {
    socket.send(Message::text(protocol::error_message(message)))
}

fn hello(session: &Session) -> String {
    let scene = session.scene();
    let phases: Vec<String> = (scene.phases.iter().enumerate())
        .map(|(i, p)| p.name.clone().unwrap_or_else(|| format!("phase {}", i + 1)))
        .collect();
    serde_json::json!({
        "type": "hello",
        "algorithms": ALGORITHMS,
        "algorithm": session.algorithm(),
        "objects": scene.objects,
        "mean_speed": scene.mean_speed,
        "max_objects": MAX_OBJECTS,
        "phases": phases,
    })
    .to_string()
}

fn serve_discrete<S: Read + Write>(
    socket: &mut WebSocket<S>,
    config: &ServerConfig,
) -> tungstenite::Result<()> {
    let mut session = match Session::new(config.scene.clone(), &config.algorithm) {
        Ok(session) => session,
        Err(e) => {
            send_error(socket, &format!("cannot start the scene: {e:#}"))?;
            return socket.close(None);
        }
    };
    let mut frame = Vec::new();
    socket.send(Message::text(hello(&session)))?;
    session.frame(&mut frame);
    send_frame(socket, &mut frame)?;
    while let Some(text) = next_text(socket)? {
        let command = match protocol::parse::<Command>(&text) {
            Ok(command) => command,
            Err(e) => {
                send_error(socket, &e)?;
                continue;
            }
        };
        match apply(&mut session, command) {
            Ok(restarted) => {
                if restarted {
                    socket.send(Message::text(hello(&session)))?;
                }
                session.frame(&mut frame);
                send_frame(socket, &mut frame)?;
            }
            Err(e) => send_error(socket, &e)?,
        }
    }
    Ok(())
}

/// Carries out a command: `Ok(true)` when the scene restarted, a one-line error when refused
/// (the session is then unchanged).
fn apply(session: &mut Session, command: Command) -> Result<bool, String> {
    match command {
        Command::Start {
            algorithm,
            objects,
            mean_speed,
        } => {
            let algorithm = algorithm.unwrap_or_else(|| session.algorithm().to_string());
            if !ALGORITHMS.contains(&algorithm.as_str()) {
                return Err(format!(
                    "unknown algorithm '{algorithm}' (known: {})",
                    ALGORITHMS.join(", ")
                ));
            }
            let mut scene: Scene = session.scene().clone();
            if let Some(objects) = objects {
                if objects == 0 || objects > MAX_OBJECTS {
                    return Err(format!(
                        "objects must be in 1..={MAX_OBJECTS}, not {objects}"
                    ));
                }
                scene.objects = objects;
            }
            if let Some(speed) = mean_speed {
                if !(speed.is_finite() && (0.0..=MAX_MEAN_SPEED).contains(&speed)) {
                    return Err(format!(
                        "mean speed must be in 0..={MAX_MEAN_SPEED}, not {speed}"
                    ));
                }
                scene.mean_speed = speed;
            }
            let (structure, depth) = session.overlay_settings();
            let mut next = Session::new(scene, &algorithm).map_err(|e| format!("{e:#}"))?;
            next.set_overlay(structure, depth);
            *session = next;
            Ok(true)
        }
        Command::Step { count } => {
            let count = count.unwrap_or(1);
            if !(1..=MAX_STEPS_PER_COMMAND).contains(&count) {
                return Err(format!(
                    "step count must be in 1..={MAX_STEPS_PER_COMMAND}, not {count}"
                ));
            }
            for _ in 0..count {
                session.step().map_err(|e| format!("{e:#}"))?;
            }
            Ok(false)
        }
        Command::Frame => Ok(false),
        Command::Overlay { structure, depth } => {
            let depth = depth.unwrap_or(session.overlay_settings().1);
            session.set_overlay(structure, depth);
            Ok(false)
        }
    }
}

fn serve_ccd<S: Read + Write>(socket: &mut WebSocket<S>) -> tungstenite::Result<()> {
    let mut options = CcdOptions::default();
    let mut session = match CcdSession::new(options.clone()) {
        Ok(session) => session,
        Err(e) => {
            send_error(socket, &e)?;
            return socket.close(None);
        }
    };
    let mut frame = Vec::new();
    socket.send(Message::text(session.hello()))?;
    session.frame(&mut frame);
    send_frame(socket, &mut frame)?;
    while let Some(text) = next_text(socket)? {
        let command = match protocol::parse::<CcdCommand>(&text) {
            Ok(command) => command,
            Err(e) => {
                send_error(socket, &e)?;
                continue;
            }
        };
        match command {
            CcdCommand::Start {
                method,
                objects,
                dim,
            } => {
                let mut next = options.clone();
                next.method = method.unwrap_or(next.method);
                next.objects = objects.unwrap_or(next.objects);
                next.dim = dim.unwrap_or(next.dim);
                match CcdSession::new(next.clone()) {
                    Ok(started) => {
                        options = next;
                        session = started;
                        socket.send(Message::text(session.hello()))?;
                        session.frame(&mut frame);
                        send_frame(socket, &mut frame)?;
                    }
                    Err(e) => send_error(socket, &e)?,
                }
            }
            CcdCommand::Advance { dt, overlay } => {
                if !(dt.is_finite() && (0.0..=MAX_ADVANCE).contains(&dt)) {
                    send_error(
                        socket,
                        &format!("dt must be in 0..={MAX_ADVANCE}, not {dt}"),
                    )?;
                    continue;
                }
                match session.set_overlay(overlay.as_deref().unwrap_or("none")) {
                    Ok(()) => {
                        session.advance(dt);
                        session.frame(&mut frame);
                        send_frame(socket, &mut frame)?;
                    }
                    Err(e) => send_error(socket, &e)?,
                }
            }
        }
    }
    Ok(())
}
