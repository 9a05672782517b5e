//! The server over real sockets: the page and its files, the stream's frames, and bad
//! requests, which get an error and leave the server (and the stream) running.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use broadphase_sim::Scene;
use broadphase_view::frame::{decode_step, KIND_CCD, MAGIC};
use broadphase_view::{asset_paths, Server, ServerConfig, StopHandle};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

fn start(algorithm: &str) -> (SocketAddr, StopHandle, thread::JoinHandle<usize>) {
    let config = ServerConfig {
        scene: Scene {
            objects: 300,
            ..Scene::default()
        },
        algorithm: algorithm.into(),
        ccd: false,
        port: 0,
    };
    let server = Server::bind(config).unwrap();
    let (addr, stop) = (server.addr(), server.stop_handle());
    (addr, stop, thread::spawn(move || server.serve()))
}

/// `(status, content type, body)` of a plain HTTP/1.1 request.
fn request(addr: SocketAddr, method: &str, path: &str) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let end = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..end]).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    // Header names are case-insensitive.
    let content_type = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map_or("", |(_, value)| value.trim())
        .to_string();
    (status, content_type, response[end + 4..].to_vec())
}

fn connect(addr: SocketAddr, path: &str) -> Socket {
    tungstenite::connect(format!("ws://{addr}{path}"))
        .unwrap()
        .0
}

fn send(socket: &mut Socket, text: &str) {
    socket.send(Message::text(text)).unwrap();
}

fn next_text(socket: &mut Socket) -> serde_json::Value {
    match socket.read().unwrap() {
        Message::Text(t) => serde_json::from_str(t.as_str()).unwrap(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

fn next_binary(socket: &mut Socket) -> Vec<u8> {
    match socket.read().unwrap() {
        Message::Binary(b) => b.to_vec(),
        other => panic!("expected a frame, got {other:?}"),
    }
}

fn expect_error(socket: &mut Socket, command: &str, words: &str) {
    send(socket, command);
    let message = next_text(socket);
    assert_eq!(message["type"], "error", "{command}: {message}");
    let text = message["message"].as_str().unwrap();
    assert!(text.contains(words), "{command}: {text}");
    assert!(!text.contains('\n'), "one line: {text}");
}

#[test]
fn the_page_and_its_files_are_served() {
    let (addr, stop, server) = start("sap");
    let (status, content_type, body) = request(addr, "GET", "/");
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/html"));
    assert!(String::from_utf8(body).unwrap().contains("js/view.js"));
    for path in asset_paths() {
        let (status, content_type, body) = request(addr, "GET", path);
        assert_eq!(status, 200, "{path}");
        assert!(!body.is_empty(), "{path}");
        if path.ends_with(".js") {
            assert!(content_type.starts_with("text/javascript"), "{path}");
            // Nothing is loaded from the network.
            let text = String::from_utf8(body).unwrap();
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{path}"
            );
        }
    }
    assert_eq!(request(addr, "GET", "/nope.js").0, 404);
    assert_eq!(request(addr, "POST", "/").0, 405);
    assert_eq!(request(addr, "GET", "/stream").0, 400);
    stop.stop(143);
    assert_eq!(server.join().unwrap(), 143);
}

/// Runs `body` on a thread and returns what it returns, or fails the test if it has not
/// returned within a bound far beyond any normal answer (a detector of a stalled server, not
/// a measure of speed).
fn within_bound<T: Send + 'static>(what: &str, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || tx.send(body()));
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{what}: no answer ({e})"))
}

/// Reads one response's status line from a connection kept open.
fn status_line(stream: &mut TcpStream) -> String {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "the connection closed");
        line.push(byte[0]);
    }
    String::from_utf8_lossy(&line).trim().to_string()
}

#[test]
fn open_connections_hold_up_no_request() {
    // A browser keeps connections open after their requests and opens others ahead of time
    // that it may leave idle; a server that gives each open connection a thread from a small
    // pool can leave the next request waiting behind them.
    let (addr, stop, _server) = start("sap");
    let mut kept: Vec<TcpStream> = (0..6).map(|_| TcpStream::connect(addr).unwrap()).collect();
    for stream in &mut kept {
        write!(stream, "GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    }
    let kept = within_bound("six requests on connections kept open", move || {
        for stream in &mut kept {
            assert_eq!(status_line(stream), "HTTP/1.1 200 OK");
        }
        kept
    });
    let idle: Vec<TcpStream> = (0..6).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let (status, _, body) = within_bound("GET / with twelve connections open", move || {
        request(addr, "GET", "/")
    });
    assert_eq!(status, 200);
    assert!(String::from_utf8(body).unwrap().contains("js/view.js"));
    let (hello, frame) = within_bound("the stream with twelve connections open", move || {
        let mut socket = connect(addr, "/stream");
        let hello = next_text(&mut socket);
        send(&mut socket, r#"{"cmd":"step","count":2}"#);
        next_binary(&mut socket);
        (hello, next_binary(&mut socket))
    });
    assert_eq!(hello["type"], "hello");
    assert_eq!(decode_step(&frame).unwrap().header.step, 2);
    // The connections are still open (the kept ones may hold the rest of their answer): the
    // answers above did not wait for them to close.
    for mut stream in kept.into_iter().chain(idle) {
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        match stream.read(&mut byte) {
            Ok(n) => assert_eq!(n, 1, "a connection was closed"),
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock),
        }
    }
    stop.stop(1);
}

#[test]
fn the_stream_sends_well_formed_frames() {
    let (addr, stop, _server) = start("bvh");
    let mut socket = connect(addr, "/stream");
    let hello = next_text(&mut socket);
    assert_eq!(
        (hello["type"].as_str(), hello["objects"].as_u64()),
        (Some("hello"), Some(300))
    );
    let first = decode_step(&next_binary(&mut socket)).unwrap();
    assert_eq!((first.header.step, first.boxes.len()), (0, 300));
    send(&mut socket, r#"{"cmd":"step","count":3}"#);
    let third = decode_step(&next_binary(&mut socket)).unwrap();
    assert_eq!(third.header.step, 3);
    assert!(third.pairs.len() >= third.header.contacts as usize);
    for &[a, b] in &third.pairs {
        assert!(third.flags[a as usize] & 2 != 0 && third.flags[b as usize] & 2 != 0);
    }
    send(
        &mut socket,
        r#"{"cmd":"overlay","structure":true,"depth":2}"#,
    );
    let drawn = decode_step(&next_binary(&mut socket)).unwrap();
    assert!(!drawn.overlay.boxes.is_empty());
    assert_eq!(drawn.header.step, 3);
    send(&mut socket, r#"{"cmd":"start","algorithm":"grid"}"#);
    assert_eq!(next_text(&mut socket)["algorithm"], "grid");
    let restarted = decode_step(&next_binary(&mut socket)).unwrap();
    assert_eq!((restarted.header.step, restarted.boxes), (0, first.boxes));
    stop.stop(1);
}

#[test]
fn bad_requests_get_an_error_and_the_server_goes_on() {
    let (addr, stop, _server) = start("sap");
    let mut socket = connect(addr, "/stream");
    next_text(&mut socket);
    next_binary(&mut socket);
    expect_error(
        &mut socket,
        r#"{"cmd":"start","algorithm":"teleport"}"#,
        "unknown algorithm",
    );
    expect_error(
        &mut socket,
        r#"{"cmd":"start","objects":1000000000}"#,
        "objects",
    );
    expect_error(&mut socket, r#"{"cmd":"start","objects":0}"#, "objects");
    expect_error(
        &mut socket,
        r#"{"cmd":"start","mean_speed":-1}"#,
        "mean speed",
    );
    expect_error(
        &mut socket,
        r#"{"cmd":"step","count":100000}"#,
        "step count",
    );
    expect_error(&mut socket, "{{{", "malformed");
    expect_error(&mut socket, r#"{"cmd":"fly"}"#, "malformed");
    expect_error(
        &mut socket,
        r#"{"cmd":"overlay","structure":"yes"}"#,
        "malformed",
    );
    socket.send(Message::binary(vec![1u8, 2, 3])).unwrap();
    assert_eq!(next_text(&mut socket)["type"], "error");
    // The stream still runs the same scene, and the server still answers.
    send(&mut socket, r#"{"cmd":"step"}"#);
    let frame = decode_step(&next_binary(&mut socket)).unwrap();
    assert_eq!((frame.header.step, frame.boxes.len()), (1, 300));
    assert_eq!(request(addr, "GET", "/").0, 200);
    let mut other = connect(addr, "/stream");
    assert_eq!(next_text(&mut other)["type"], "hello");
    stop.stop(1);
}

#[test]
fn the_continuous_time_stream_advances() {
    let (addr, stop, _server) = start("sap");
    let mut socket = connect(addr, "/ccd-stream");
    assert_eq!(next_text(&mut socket)["method"], "calendar");
    next_binary(&mut socket);
    send(
        &mut socket,
        r#"{"cmd":"advance","dt":0.25,"overlay":"cells"}"#,
    );
    let frame = next_binary(&mut socket);
    let word = |k: usize| u32::from_le_bytes(frame[4 * k..4 * k + 4].try_into().unwrap());
    assert_eq!((word(0), word(1), word(2)), (MAGIC, KIND_CCD, 1000));
    let time = f64::from_le_bytes(frame[24..32].try_into().unwrap());
    assert_eq!(time, 0.25);
    expect_error(&mut socket, r#"{"cmd":"advance","dt":-1}"#, "dt");
    expect_error(
        &mut socket,
        r#"{"cmd":"advance","dt":0.1,"overlay":"x"}"#,
        "overlay",
    );
    expect_error(
        &mut socket,
        r#"{"cmd":"start","method":"teleport"}"#,
        "teleport",
    );
    expect_error(
        &mut socket,
        r#"{"cmd":"start","objects":99999999}"#,
        "objects",
    );
    send(
        &mut socket,
        r#"{"cmd":"start","dim":3,"objects":200,"method":"swept-bvh"}"#,
    );
    assert_eq!(next_text(&mut socket)["dim"], 3);
    assert_eq!(next_binary(&mut socket).len(), 96 + 200 * 16);
    stop.stop(1);
}
