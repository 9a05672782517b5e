//! The HTTP side: the embedded page and its scripts, and the upgrade of `/stream` and
//! `/ccd-stream` to a WebSocket ([`crate::connection`]).
//!
//! axum on a current-thread tokio runtime: every connection is a task, so a connection that
//! a browser opens ahead of time and leaves idle costs nothing and holds up no other one.
//! The streams' simulations run on threads of their own, never on the runtime.

use std::future::IntoFuture;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::State;
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use broadphase_sim::Scene;

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
    listener: TcpListener,
    addr: SocketAddr,
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

/// How often [`Server::serve`] looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);

impl Server {
    /// Listens on 127.0.0.1 at the configured port.
    pub fn bind(config: ServerConfig) -> anyhow::Result<Self> {
        let listen = || -> std::io::Result<(TcpListener, SocketAddr)> {
            let listener = TcpListener::bind(("127.0.0.1", config.port))?;
            // The runtime takes the listener over and needs it non-blocking.
            listener.set_nonblocking(true)?;
            let addr = listener.local_addr()?;
            Ok((listener, addr))
        };
        let (listener, addr) = listen()
            .map_err(|e| anyhow::anyhow!("cannot listen on 127.0.0.1:{}: {e}", config.port))?;
        Ok(Self {
            listener,
            addr,
            config: Arc::new(config),
            stop: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr())
    }

    /// A handle that stops [`Server::serve`].
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(Arc::clone(&self.stop))
    }

    /// Answers requests until stopped, then closes the listener and every connection and
    /// returns the code the stop was asked with (1 if the server could not run). The streams'
    /// threads end once their connection is gone.
    pub fn serve(self) -> usize {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("error: cannot start the server: {e}");
                return 1;
            }
        };
        let Self {
            listener,
            config,
            stop,
            ..
        } = self;
        let code = runtime.block_on(async move {
            let listener = match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => listener,
                Err(e) => {
                    eprintln!("error: cannot serve: {e}");
                    return 1;
                }
            };
            let app = Router::new().fallback(answer).with_state(config);
            let server = tokio::spawn(axum::serve(listener, app).into_future());
            let mut poll = tokio::time::interval(STOP_POLL);
            loop {
                poll.tick().await;
                let code = stop.load(Ordering::SeqCst);
                if code != 0 {
                    server.abort();
                    return code;
                }
                if server.is_finished() {
                    if let Ok(Err(e)) = server.await {
                        eprintln!("error: {e}");
                    }
                    return 1;
                }
            }
        });
        // Tasks still running (open connections) are dropped without waiting for them.
        runtime.shutdown_background();
        code
    }
}

/// Every request: `GET` of a file or of a stream; anything else is refused with a status
/// and one line of text.
async fn answer(
    State(config): State<Arc<ServerConfig>>,
    method: Method,
    uri: Uri,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if method != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET is served");
    }
    let path = uri.path();
    let mode = match path {
        "/stream" => Some(Mode::Discrete),
        "/ccd-stream" => Some(Mode::Ccd),
        _ => None,
    };
    if let Some(mode) = mode {
        let Ok(upgrade) = upgrade else {
            return text(StatusCode::BAD_REQUEST, "this path is a WebSocket stream");
        };
        return upgrade
            .max_message_size(MAX_MESSAGE)
            .max_frame_size(MAX_MESSAGE)
            .on_upgrade(move |socket| connection::serve(socket, mode, config));
    }
    let path = match path {
        "/" if config.ccd => "/ccd.html",
        "/" => "/index.html",
        other => other,
    };
    match assets::get(path) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "no-store"),
            ],
            asset.body,
        )
            .into_response(),
        None => text(StatusCode::NOT_FOUND, "not found"),
    }
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}
