//! The operations HTTP endpoint: `GET /metrics` (Prometheus text format), `GET /healthz`
//! (the process serves) and `GET /readyz` (the catalog is open and this server is still the
//! writer). Three fixed GET routes need no framework: requests are read up to a small limit,
//! answered, and the connection is closed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::metrics::Metrics;

const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// Serves until `shutdown` completes.
pub async fn serve_http(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let metrics = metrics.clone();
                    tokio::spawn(async move {
                        let answered =
                            tokio::time::timeout(Duration::from_secs(10), answer(stream, &metrics));
                        if let Ok(Err(e)) = answered.await {
                            tracing::debug!("metrics connection: {e}");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!("metrics endpoint accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

async fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_REQUEST_HEAD {
            return respond(&mut stream, 431, "text/plain", "request header too large\n").await;
        }
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    if method != "GET" && method != "HEAD" {
        return respond(&mut stream, 405, "text/plain", "only GET\n").await;
    }
    match path {
        "/metrics" => {
            let body = metrics.render();
            respond(
                &mut stream,
                200,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                &body,
            )
            .await
        }
        "/healthz" => respond(&mut stream, 200, "text/plain", "ok\n").await,
        "/readyz" if metrics.is_fenced() => {
            respond(
                &mut stream,
                503,
                "text/plain",
                "fenced: another server is the writer\n",
            )
            .await
        }
        "/readyz" => respond(&mut stream, 200, "text/plain", "ready\n").await,
        _ => respond(&mut stream, 404, "text/plain", "not found\n").await,
    }
}

async fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}
