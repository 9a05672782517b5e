//! The HTTP side: the embedded page and its scripts, and the upgrade of `/stream` and
//! `/ccd-stream` to a WebSocket, each served on its own thread.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use broadphase_sim::Scene;
use tiny_http::{Header, Method, Request, Response, StatusCode};
use tungstenite::handshake::derive_accept_key;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::WebSocket;

use crate::assets;
use crate::connection::{self, Mode};

/// What a server serves: the scene and algorithm the discrete page starts with, and which
/// page `/` is.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The discrete page's scene.
    pub scene: Scene,
    /// The discrete page's first algorithm.
    pub algorithm: String,
    /// `/` serves the continuous-time page (both pages are always at their own paths).
    pub ccd: bool,
    /// Port on 127.0.0.1, 0 for any free one.
    pub port: u16,
}

/// A listening server. [`Server::serve`] answers requests until [`StopHandle::stop`].
pub struct Server {
    http: tiny_http::Server,
    config: Arc<ServerConfig>,
    stop: Arc<AtomicUsize>,
}

/// Stops a [`Server`] from another thread: holds 0 while it runs, else the reason to stop
/// (the exit code a signal handler stores in it).
#[derive(Debug, Clone)]
pub struct StopHandle(Arc<AtomicUsize>);

impl StopHandle {
    /// Asks the server to stop: [`Server::serve`] returns `code` within a tenth of a second.
    pub fn stop(&self, code: usize) {
        self.0.store(code.max(1), Ordering::SeqCst);
    }

    /// The shared flag, for `signal_hook::flag::register_usize`.
    pub fn flag(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.0)
    }
}

/// Largest message the page may send: commands are a few dozen bytes of JSON.
const MAX_MESSAGE: usize = 64 << 10;

impl Server {
    /// Listens on 127.0.0.1 at the configured port.
    pub fn bind(config: ServerConfig) -> anyhow::Result<Self> {
        let http = tiny_http::Server::http(("127.0.0.1", config.port))
            .map_err(|e| anyhow::anyhow!("cannot listen on 127.0.0.1:{}: {e}", config.port))?;
        Ok(Self {
            http,
            config: Arc::new(config),
            stop: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.http
            .server_addr()
            .to_ip()
            .expect("bound to an IP address")
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr())
    }

    /// A handle that stops [`Server::serve`].
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(Arc::clone(&self.stop))
    }

    /// Answers requests until stopped, then closes the listener (dropping the server) and
    /// returns the code the stop was asked with. Open streams end with the process, or when
    /// their page closes them.
    pub fn serve(self) -> usize {
        loop {
            let code = self.stop.load(Ordering::SeqCst);
            if code != 0 {
                return code;
            }
            match self.http.recv_timeout(Duration::from_millis(100)) {
                Ok(Some(request)) => self.answer(request),
                Ok(None) => {}
                Err(e) => eprintln!("error: {e}"),
            }
        }
    }

    fn answer(&self, request: Request) {
        let path = request.url().split('?').next().unwrap_or("").to_string();
        if *request.method() != Method::Get {
            let _ = request.respond(text(405, "only GET is served"));
            return;
        }
        let mode = match path.as_str() {
            "/stream" => Some(Mode::Discrete),
            "/ccd-stream" => Some(Mode::Ccd),
            _ => None,
        };
        if let Some(mode) = mode {
            self.upgrade(request, mode);
            return;
        }
        let path = match path.as_str() {
            "/" if self.config.ccd => "/ccd.html",
            "/" => "/index.html",
            other => other,
        };
        let response = match assets::get(path) {
            Some(asset) => Response::from_data(asset.body)
                .with_header(header("Content-Type", asset.content_type))
                .with_header(header("Cache-Control", "no-store")),
            None => text(404, "not found"),
        };
        let _ = request.respond(response);
    }

    /// Completes the WebSocket handshake (RFC 6455, section 4.2.2) and hands the stream to
    /// its own thread; a request without the handshake's headers gets 400.
    fn upgrade(&self, request: Request, mode: Mode) {
        let value = |name: &'static str| {
            request
                .headers()
                .iter()
                .find(|h| h.field.equiv(name))
                .map(|h| h.value.as_str().to_string())
        };
        let is_upgrade = value("Upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
        let (Some(key), true) = (value("Sec-WebSocket-Key"), is_upgrade) else {
            let _ = request.respond(text(400, "this path is a WebSocket stream"));
            return;
        };
        let response = Response::empty(StatusCode(101)).with_header(header(
            "Sec-WebSocket-Accept",
            &derive_accept_key(key.as_bytes()),
        ));
        let stream = request.upgrade("websocket", response);
        let config = Arc::clone(&self.config);
        let socket_config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let spawned = thread::Builder::new()
            .name("view-stream".into())
            .spawn(move || {
                let socket = WebSocket::from_raw_socket(stream, Role::Server, Some(socket_config));
                connection::serve(socket, mode, &config);
            });
        if let Err(e) = spawned {
            eprintln!("error: cannot start a stream thread: {e}");
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

fn text(status: u16, body: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}
