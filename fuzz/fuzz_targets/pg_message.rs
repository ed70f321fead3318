//! The PostgreSQL front end (host-native/src/server: the start-up packet decoder, the
//! authentication exchanges, the frontend message decoder of codec.rs and the connection's state
//! machine) on an arbitrary client byte stream. The real server (`serve_backend`) listens on
//! loopback with the core engine behind it; each input is sent on one fresh connection, the
//! write side is closed, and the server's answer is read to its end. A panic anywhere in the
//! server aborts the process (libFuzzer's panic hook); a connection that does not end within
//! ten seconds after its input ran out is a hang and fails too.
//!
//! Byte 0 picks the authentication method (trust, cleartext, MD5, SCRAM; user `rocklake`,
//! password `pw`); the rest is what the client sends, starting with the start-up packet.
#![no_main]

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use rocklake::server::{serve_backend, AuthConfig, AuthMethod, ServerConfig};
use rocklake_fuzz::EngineBackend;

const METHODS: [AuthMethod; 4] = [
    AuthMethod::Trust,
    AuthMethod::Password,
    AuthMethod::Md5,
    AuthMethod::Scram,
];

struct Server {
    addr: SocketAddr,
    backend: Arc<EngineBackend>,
}

/// One server per authentication method, each on its own thread with its own runtime.
fn servers() -> &'static Vec<Server> {
    static SERVERS: OnceLock<Vec<Server>> = OnceLock::new();
    SERVERS.get_or_init(|| METHODS.iter().map(|m| start(*m)).collect())
}

fn start(method: AuthMethod) -> Server {
    let backend = Arc::new(EngineBackend::default());
    let served = backend.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind loopback");
            tx.send(listener.local_addr().expect("local addr"))
                .expect("report address");
            let auth = AuthConfig::new(method, "rocklake", "pw").expect("auth config");
            let mut config = ServerConfig::new(auth);
            config.startup_timeout = Duration::from_secs(5);
            serve_backend(listener, served, config, std::future::pending::<()>())
                .await
                .expect("server runs");
        });
    });
    let addr = rx.recv().expect("server address");
    Server { addr, backend }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, stream)) = data.split_first() else {
        return;
    };
    let server = &servers()[usize::from(which) % METHODS.len()];
    server.backend.reset();
    let mut conn = TcpStream::connect(server.addr).expect("connect to the fuzzed server");
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    // The server answers while it reads; with inputs of a few KiB the socket buffers never fill,
    // so writing everything before reading cannot deadlock. It may close early (FATAL), so a
    // failed write is normal.
    let _ = conn.write_all(stream);
    let _ = conn.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    match conn.read_to_end(&mut answer) {
        Ok(_) => {}
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            panic!("the server did not end the connection 10 s after the input ended")
        }
        // Reset by the server (it closed with unread input): the connection is over.
        Err(_) => {}
    }
    // The session is closed right after the socket; wait for it so the next input starts clean.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.backend.session_count() > 0 {
        assert!(
            Instant::now() < deadline,
            "the session outlived its connection by 10 s"
        );
        std::thread::sleep(Duration::from_micros(50));
    }
});
