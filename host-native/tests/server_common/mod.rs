//! A raw-socket PostgreSQL v3 client for protocol tests: it writes exact frontend messages and
//! returns every backend message as (type, body), so tests can assert the framing byte by byte.
#![allow(dead_code)]

use std::time::Duration;

use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const TIMEOUT: Duration = Duration::from_secs(10);

pub struct Client {
    pub stream: TcpStream,
    pub pid: i32,
    pub secret: u32,
    pub params: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    pub ty: u8,
    pub body: Vec<u8>,
}

impl Msg {
    pub fn ty(&self) -> char {
        char::from(self.ty)
    }

    /// ErrorResponse / NoticeResponse fields as (code, value).
    pub fn fields(&self) -> Vec<(char, String)> {
        let mut out = Vec::new();
        let mut rest = &self.body[..];
        while let Some((&code, tail)) = rest.split_first() {
            if code == 0 {
                break;
            }
            let end = tail.iter().position(|b| *b == 0).expect("field terminator");
            out.push((
                char::from(code),
                String::from_utf8(tail[..end].to_vec()).expect("utf8"),
            ));
            rest = &tail[end + 1..];
        }
        out
    }

    pub fn field(&self, code: char) -> Option<String> {
        self.fields()
            .into_iter()
            .find(|(c, _)| *c == code)
            .map(|(_, v)| v)
    }

    pub fn sqlstate(&self) -> String {
        assert_eq!(self.ty(), 'E', "expected ErrorResponse, got {self:?}");
        self.field('C').expect("SQLSTATE")
    }

    /// CommandComplete tag.
    pub fn tag(&self) -> String {
        assert_eq!(self.ty(), 'C', "expected CommandComplete, got {self:?}");
        cstr(&self.body)
    }
}

pub fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|x| *x == 0).unwrap_or(b.len());
    String::from_utf8(b[..end].to_vec()).expect("utf8")
}

pub fn be_i16(b: &[u8]) -> i16 {
    i16::from_be_bytes([b[0], b[1]])
}

pub fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Frontend message builders.
pub fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![ty];
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

pub fn query(sql: &str) -> Vec<u8> {
    let mut b = sql.as_bytes().to_vec();
    b.push(0);
    msg(b'Q', &b)
}

pub fn parse(name: &str, sql: &str, types: &[u32]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    b.extend_from_slice(sql.as_bytes());
    b.push(0);
    b.extend_from_slice(&(types.len() as i16).to_be_bytes());
    for t in types {
        b.extend_from_slice(&t.to_be_bytes());
    }
    msg(b'P', &b)
}

pub fn bind_unnamed(params: &[&[u8]]) -> Vec<u8> {
    let mut b = vec![0, 0]; // portal "", statement ""
    b.extend_from_slice(&0i16.to_be_bytes()); // parameter formats
    b.extend_from_slice(&(params.len() as i16).to_be_bytes());
    for p in params {
        b.extend_from_slice(&(p.len() as i32).to_be_bytes());
        b.extend_from_slice(p);
    }
    b.extend_from_slice(&0i16.to_be_bytes()); // result formats: all text
    msg(b'B', &b)
}

pub fn describe(kind: u8, name: &str) -> Vec<u8> {
    let mut b = vec![kind];
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    msg(b'D', &b)
}

pub fn execute(max_rows: i32) -> Vec<u8> {
    let mut b = vec![0];
    b.extend_from_slice(&max_rows.to_be_bytes());
    msg(b'E', &b)
}

pub fn sync() -> Vec<u8> {
    msg(b'S', &[])
}

pub fn copy_data(data: &[u8]) -> Vec<u8> {
    msg(b'd', data)
}

pub fn copy_done() -> Vec<u8> {
    msg(b'c', &[])
}

pub fn copy_fail(reason: &str) -> Vec<u8> {
    let mut b = reason.as_bytes().to_vec();
    b.push(0);
    msg(b'f', &b)
}

pub fn startup_packet(params: &[(&str, &str)], version: i32) -> Vec<u8> {
    let mut body = version.to_be_bytes().to_vec();
    for (k, v) in params {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut out = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

pub fn ssl_request() -> Vec<u8> {
    let mut out = 8i32.to_be_bytes().to_vec();
    out.extend_from_slice(&80_877_103i32.to_be_bytes());
    out
}

pub async fn send_cancel(addr: std::net::SocketAddr, pid: i32, secret: u32) {
    let mut s = TcpStream::connect(addr).await.expect("connect for cancel");
    let mut out = 16i32.to_be_bytes().to_vec();
    out.extend_from_slice(&80_877_102i32.to_be_bytes());
    out.extend_from_slice(&pid.to_be_bytes());
    out.extend_from_slice(&secret.to_be_bytes());
    s.write_all(&out).await.expect("write cancel");
    // The server closes the cancel connection without answering.
    let mut buf = [0u8; 1];
    let n = tokio::time::timeout(TIMEOUT, s.read(&mut buf))
        .await
        .expect("cancel close")
        .unwrap_or(0);
    assert_eq!(n, 0, "a CancelRequest gets no answer");
}

impl Client {
    pub async fn raw(addr: std::net::SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.expect("connect");
        Client {
            stream,
            pid: 0,
            secret: 0,
            params: Vec::new(),
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    /// Next backend message, or None at EOF.
    pub async fn try_recv(&mut self) -> Option<Msg> {
        let fut = async {
            let ty = match self.stream.read_u8().await {
                Ok(t) => t,
                Err(_) => return None,
            };
            let len = self.stream.read_i32().await.ok()?;
            let mut body = vec![0u8; (len - 4) as usize];
            self.stream.read_exact(&mut body).await.ok()?;
            Some(Msg { ty, body })
        };
        tokio::time::timeout(TIMEOUT, fut)
            .await
            .expect("timed out waiting for the server")
    }

    pub async fn recv(&mut self) -> Msg {
        self.try_recv().await.expect("server closed the connection")
    }

    /// Messages up to and including the next ReadyForQuery.
    pub async fn until_ready(&mut self) -> Vec<Msg> {
        let mut out = Vec::new();
        loop {
            let m = self.recv().await;
            let done = m.ty == b'Z';
            out.push(m);
            if done {
                return out;
            }
        }
    }

    pub fn types(msgs: &[Msg]) -> String {
        msgs.iter().map(Msg::ty).collect()
    }

    /// Whether the server closed the connection (after draining pending messages).
    pub async fn is_closed(&mut self) -> bool {
        let mut buf = [0u8; 1];
        matches!(
            tokio::time::timeout(TIMEOUT, self.stream.read(&mut buf)).await,
            Ok(Ok(0)) | Ok(Err(_))
        )
    }

    /// SSLRequest ('N' expected) + StartupMessage; returns the first authentication message.
    pub async fn start(&mut self, user: &str) -> Msg {
        self.send(&ssl_request()).await;
        let n = tokio::time::timeout(TIMEOUT, self.stream.read_u8())
            .await
            .expect("ssl answer")
            .expect("read");
        assert_eq!(n, b'N', "SSLRequest must be declined with 'N'");
        self.send(&startup_packet(
            &[("user", user), ("database", "lake")],
            196_608,
        ))
        .await;
        self.recv().await
    }

    /// Finish start-up after AuthenticationOk: collect ParameterStatus and BackendKeyData.
    pub async fn finish_startup(&mut self) {
        loop {
            let m = self.recv().await;
            match m.ty {
                b'S' => {
                    let name = cstr(&m.body);
                    let value = cstr(&m.body[name.len() + 1..]);
                    self.params.push((name, value));
                }
                b'K' => {
                    self.pid = be_i32(&m.body);
                    self.secret = be_i32(&m.body[4..]) as u32;
                }
                b'Z' => {
                    assert_eq!(m.body, b"I");
                    return;
                }
                other => panic!("unexpected message {} during start-up", char::from(other)),
            }
        }
    }

    /// Full SCRAM-SHA-256 login; Ok(()) on AuthenticationOk, Err(ErrorResponse) otherwise.
    pub async fn scram_login(&mut self, user: &str, password: &str) -> Result<(), Msg> {
        let m = self.start(user).await;
        assert_eq!(m.ty, b'R');
        assert_eq!(be_i32(&m.body), 10, "AuthenticationSASL");
        assert_eq!(&m.body[4..], b"SCRAM-SHA-256\0\0");
        let mut scram = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
        let mut b = b"SCRAM-SHA-256\0".to_vec();
        b.extend_from_slice(&(scram.message().len() as i32).to_be_bytes());
        b.extend_from_slice(scram.message());
        self.send(&msg(b'p', &b)).await;
        let m = self.recv().await;
        assert_eq!(m.ty, b'R');
        assert_eq!(be_i32(&m.body), 11, "AuthenticationSASLContinue");
        scram.update(&m.body[4..]).expect("server-first");
        self.send(&msg(b'p', scram.message())).await;
        let m = self.recv().await;
        if m.ty == b'E' {
            return Err(m);
        }
        assert_eq!(be_i32(&m.body), 12, "AuthenticationSASLFinal");
        scram
            .finish(&m.body[4..])
            .expect("server signature verifies");
        let ok = self.recv().await;
        assert_eq!((ok.ty, be_i32(&ok.body)), (b'R', 0), "AuthenticationOk");
        self.finish_startup().await;
        Ok(())
    }
}
