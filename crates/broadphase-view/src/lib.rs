//! `broadphase view`: a live web viewer of the broad phases and of the continuous-time
//! simulation.
//!
//! [`run`] starts a local HTTP server on 127.0.0.1 that serves one page, embedded in the
//! binary, and streams each step's state to it over a WebSocket in a binary format
//! ([`frame`]). The page draws the scene's boxes coloured by state (no overlap, overlapping
//! in the broad phase, in contact in the narrow phase), the algorithm's own structure as an
//! overlay ([`overlay`]), and a chart of each step's time split as the workbench measures it;
//! with `--ccd` it shows the event-driven simulation of `broadphase-ccd` ([`ccd`]).
//!
//! The server is split by concern: [`server`] answers HTTP and upgrades the stream,
//! [`connection`] reads the page's commands ([`protocol`]) and answers each with a frame,
//! [`session`] runs a discrete scene (world, broad phase, narrow phase, timing), and
//! [`algorithm`] holds the broad phase as its concrete type so that [`overlay`] can read its
//! structure.
#![deny(missing_docs)]

pub mod algorithm;
mod assets;
pub mod ccd;
pub mod connection;
pub mod frame;
pub mod overlay;
pub mod protocol;
pub mod server;
pub mod session;

use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write;

use anyhow::Context;
use broadphase_sim::{Scene, SceneBuilder};
use clap::Args;

pub use assets::paths as asset_paths;
pub use server::{Server, ServerConfig, StopHandle};

/// Most objects a page may ask for in a discrete scene: far beyond what a browser draws
/// smoothly, and below what would exhaust memory; a larger count is refused as absurd.
pub const MAX_OBJECTS: usize = 200_000;

/// Most bodies a page may ask for in the continuous-time simulation.
pub const MAX_BODIES: usize = 100_000;

/// The flags of `broadphase view`.
#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// A scene file (TOML, as for `bench`); the default scene otherwise.
    #[arg(long, value_name = "FILE")]
    pub scene: Option<PathBuf>,
    /// The algorithm the page starts with (one of the library's names).
    #[arg(long, short, default_value = "sort-and-sweep")]
    pub algorithm: String,
    /// Objects of the scene, overriding the scene's count.
    #[arg(long)]
    pub objects: Option<usize>,
    /// Serve the continuous-time simulation's page instead of the discrete scene's.
    #[arg(long)]
    pub ccd: bool,
    /// Port on 127.0.0.1; 0 takes any free port. The URL is printed as the first line.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Open the page in the system's browser once the server listens.
    #[arg(long)]
    pub open: bool,
}

impl ViewArgs {
    /// Checks the flags and reads the scene: the server's configuration, or a one-line
    /// error.
    pub fn config(&self) -> anyhow::Result<ServerConfig> {
        if !broadphase::ALGORITHMS.contains(&self.algorithm.as_str()) {
            anyhow::bail!(
                "unknown algorithm '{}' (known: {})",
                self.algorithm,
                broadphase::ALGORITHMS.join(", ")
            );
        }
        let mut builder = match &self.scene {
            Some(path) => SceneBuilder::from_file(path)?,
            None => SceneBuilder::new(),
        };
        if let Some(objects) = self.objects {
            if objects == 0 || objects > MAX_OBJECTS {
                anyhow::bail!("--objects must be in 1..={MAX_OBJECTS}, not {objects}");
            }
            builder.set("objects", &objects.to_string())?;
        }
        let scene: Scene = builder.build()?;
        if scene.max_objects() > MAX_OBJECTS {
            anyhow::bail!(
                "the scene holds up to {} objects; the viewer shows at most {MAX_OBJECTS}",
                scene.max_objects()
            );
        }
        Ok(ServerConfig {
            scene,
            algorithm: self.algorithm.clone(),
            ccd: self.ccd,
            port: self.port,
        })
    }
}

/// Runs `broadphase view`: serves the page until the process is stopped. The CLI's
/// interrupt handler ends it on SIGINT (Ctrl-C) or SIGTERM with one line and exit code 130 or
/// 143; the listener goes with the process. Bad flags give an error (the caller prints it on
/// one line and exits with 2).
pub fn run(args: &ViewArgs) -> anyhow::Result<ExitCode> {
    let config = args.config()?;
    let server = Server::bind(config)?;
    let url = server.url();
    // The first line of output is the URL: scripts and tests read it to find the port.
    println!("{url}");
    std::io::stdout()
        .flush()
        .context("cannot write the URL to standard output")?;
    if args.open {
        open_browser(&url);
    }
    let code = server.serve();
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Asks the desktop to open `url`; a failure is reported, not fatal (the URL is printed).
fn open_browser(url: &str) {
    let command = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(target_os = "windows") {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    if let Err(e) = std::process::Command::new(command.0)
        .args(&command.1)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("cannot open a browser ({e}); open {url} by hand");
    }
}
