//! One page's stream: reads its commands ([`crate::protocol`]) and answers each, with a
//! frame or a text message. A refused command gets an error message and changes nothing;
//! only the page closing the stream (or the stream breaking) ends it.
//!
//! Each stream's scene runs on a thread of its own ([`Stream`] lives there): stepping is CPU
//! work that would otherwise hold up the server's runtime, which answers every other
//! connection. The runtime's side ([`serve`]) only carries messages: it hands one command to
//! the thread, sends the thread's replies in order, and only then reads the next command (the
//! page waits for each answer anyway, see [`crate::protocol`]).

use std::sync::Arc;
use std::thread;

use axum::extract::ws::{Message, Utf8Bytes, WebSocket};
use broadphase::ALGORITHMS;
use broadphase_sim::Scene;
use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

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

/// A message for the page.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A JSON text: hello or error ([`crate::protocol`]).
    Text(String),
    /// A binary frame ([`crate::frame`]).
    Frame(Bytes),
}

/// A stream's scene and the buffer its frames are written to; answers the page's messages
/// with [`Reply`]s, collected until [`Stream::replies`] takes them.
pub struct Stream {
    state: State,
    /// Each frame is written here and split off as [`Bytes`] to be sent, leaving this empty.
    /// Once the socket has sent a frame it drops it, and the next frame's `reserve` finds the
    /// allocation unshared and writes over it: a stream in steady state allocates no frame
    /// buffer (a larger frame, or one written while the last is still held, gets a new one).
    frame: BytesMut,
    replies: Vec<Reply>,
}

enum State {
    Discrete(Box<Session>),
    Ccd {
        options: CcdOptions,
        session: Box<CcdSession>,
    },
}

impl Stream {
    /// Starts the scene of `mode`, with its hello and first frame as the first replies; a
    /// one-line error when the scene cannot start.
    pub fn open(mode: Mode, config: &ServerConfig) -> Result<Self, String> {
        let state = match mode {
            Mode::Discrete => State::Discrete(Box::new(
                Session::new(config.scene.clone(), &config.algorithm)
                    .map_err(|e| format!("cannot start the scene: {e:#}"))?,
            )),
            Mode::Ccd => {
                let options = CcdOptions::default();
                let session = Box::new(CcdSession::new(options.clone())?);
                State::Ccd { options, session }
            }
        };
        let mut stream = Self {
            state,
            frame: BytesMut::new(),
            replies: Vec::new(),
        };
        stream.hello();
        stream.push_frame();
        Ok(stream)
    }

    /// Takes the replies so far, oldest first.
    pub fn replies(&mut self) -> std::vec::Drain<'_, Reply> {
        self.replies.drain(..)
    }

    /// Answers a binary message: commands are texts.
    pub fn handle_binary(&mut self) {
        self.error("commands are JSON texts, not binary");
    }

    /// Answers a command text.
    pub fn handle_text(&mut self, text: &str) {
        match &mut self.state {
            State::Discrete(session) => {
                let command = match protocol::parse::<Command>(text) {
                    Ok(command) => command,
                    Err(e) => return self.error(&e),
                };
                match apply(session, command) {
                    Ok(restarted) => {
                        if restarted {
                            self.hello();
                        }
                        self.push_frame();
                    }
                    Err(e) => self.error(&e),
                }
            }
            State::Ccd { .. } => match protocol::parse::<CcdCommand>(text) {
                Ok(command) => self.apply_ccd(command),
                Err(e) => self.error(&e),
            },
        }
    }

    fn apply_ccd(&mut self, command: CcdCommand) {
        let State::Ccd { options, session } = &mut self.state else {
            return;
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
                        *options = next;
                        **session = started;
                        self.hello();
                        self.push_frame();
                    }
                    Err(e) => self.error(&e),
                }
            }
            CcdCommand::Advance { dt, overlay } => {
                if !(dt.is_finite() && (0.0..=MAX_ADVANCE).contains(&dt)) {
                    return self.error(&format!("dt must be in 0..={MAX_ADVANCE}, not {dt}"));
                }
                match session.set_overlay(overlay.as_deref().unwrap_or("none")) {
                    Ok(()) => {
                        session.advance(dt);
                        self.push_frame();
                    }
                    Err(e) => self.error(&e),
                }
            }
        }
    }

    fn hello(&mut self) {
        let text = match &self.state {
            State::Discrete(session) => hello(session),
            State::Ccd { session, .. } => session.hello(),
        };
        self.replies.push(Reply::Text(text));
    }

    fn push_frame(&mut self) {
        match &mut self.state {
            State::Discrete(session) => session.frame(&mut self.frame),
            State::Ccd { session, .. } => session.frame(&mut self.frame),
        }
        self.replies.push(Reply::Frame(self.frame.split().freeze()));
    }

    fn error(&mut self, message: &str) {
        self.replies
            .push(Reply::Text(protocol::error_message(message)));
    }
}

/// What the runtime hands a stream's thread.
enum Incoming {
    Text(Utf8Bytes),
    Binary,
}

/// Serves one stream until the page closes it or it breaks (then it ends quietly: a page
/// that goes away, closing or not, is ordinary).
pub(crate) async fn serve(mut socket: WebSocket, mode: Mode, config: Arc<ServerConfig>) {
    // One command at a time goes to the thread; its replies come back ended by `None`.
    let (command_tx, command_rx) = mpsc::channel::<Incoming>(1);
    let (reply_tx, mut reply_rx) = mpsc::channel::<Option<Reply>>(4);
    let spawned = thread::Builder::new()
        .name("view-stream".into())
        .spawn(move || run_stream(mode, &config, command_rx, reply_tx));
    if let Err(e) = spawned {
        eprintln!("error: cannot start a stream thread: {e}");
        return;
    }
    loop {
        loop {
            let message = match reply_rx.recv().await {
                Some(Some(Reply::Text(text))) => Message::text(text),
                Some(Some(Reply::Frame(frame))) => Message::Binary(frame),
                Some(None) => break,
                // The thread has ended: its scene could not start.
                None => {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            };
            if socket.send(message).await.is_err() {
                return;
            }
        }
        let incoming = loop {
            match socket.recv().await {
                Some(Ok(Message::Text(text))) => break Incoming::Text(text),
                Some(Ok(Message::Binary(_))) => break Incoming::Binary,
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                // Pings are answered by the socket itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            }
        };
        if command_tx.send(incoming).await.is_err() {
            return;
        }
    }
}

/// A stream's thread: runs its scene, answering each command with its replies and `None`.
/// Ends when the runtime's side drops its end (the page went away, or the server stopped).
fn run_stream(
    mode: Mode,
    config: &ServerConfig,
    mut commands: mpsc::Receiver<Incoming>,
    replies: mpsc::Sender<Option<Reply>>,
) {
    let mut stream = match Stream::open(mode, config) {
        Ok(stream) => stream,
        Err(message) => {
            let _ = replies.blocking_send(Some(Reply::Text(protocol::error_message(&message))));
            return;
        }
    };
    loop {
        for reply in stream.replies() {
            if replies.blocking_send(Some(reply)).is_err() {
                return;
            }
        }
        if replies.blocking_send(None).is_err() {
            return;
        }
        match commands.blocking_recv() {
            Some(Incoming::Text(text)) => stream.handle_text(text.as_str()),
            Some(Incoming::Binary) => stream.handle_binary(),
            None => return,
        }
    }
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
