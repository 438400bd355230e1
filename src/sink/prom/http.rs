//! The HTTP side of `--listen`: hyper's HTTP/1 server on one thread with a single-threaded tokio
//! runtime, bounded so that slow or hostile clients cost little and cannot reach the sampler.
//!
//! Why hyper and not tiny_http: tiny_http starts a thread per connection without a cap and has no
//! header-size or read-timeout settings, so a slowloris client could pile up threads. hyper
//! gives all three bounds below, and one runtime thread serves every connection as a task.
//!
//! Bounds: at most [`MAX_CONNECTIONS`] open connections (further clients wait in the kernel's
//! accept backlog); request head at most [`MAX_HEAD_BYTES`] and [`MAX_HEADERS`] headers (431
//! beyond); the head must arrive within [`HEAD_TIMEOUT`], which also closes idle keep-alive
//! connections; a connection lives at most [`CONN_LIFETIME`]. Only `GET`/`HEAD` on `/metrics` and
//! `/`; other paths 404, other methods 405. Request bodies are never read.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};

use super::Shared;
use crate::util::warn::warn_once;

/// Connections served at once; more wait in the accept backlog until one closes.
pub const MAX_CONNECTIONS: usize = 32;
/// Largest request head (request line and headers) accepted; hyper's minimum buffer size.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;
pub const MAX_HEADERS: usize = 64;
/// Time a client has to send a complete request head, also the keep-alive idle limit.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest life of one connection; then it is closed after the response in flight.
pub const CONN_LIFETIME: Duration = Duration::from_secs(60);

const INDEX: &str = "<!doctype html>\n<html><head><title>gpumon</title></head><body>\n<h1>gpumon</h1>\n\
<p>Metrics of the running <code>gpumon record</code>: <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n";

/// The serving thread; dropped or stopped, it closes every connection.
pub struct Server {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serve on an already bound listener (bound by the caller so that errors come back at once).
    pub fn start(listener: std::net::TcpListener, shared: Arc<Shared>) -> Result<Server> {
        listener.set_nonblocking(true).context("setting the metrics listener non-blocking")?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .context("starting the metrics server runtime")?;
        let listener = {
            let _guard = rt.enter();
            TcpListener::from_std(listener).context("registering the metrics listener")?
        };
        let (tx, rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("metrics-http".into())
            .spawn(move || rt.block_on(accept_loop(listener, shared, rx)))
            .context("starting the metrics server thread")?;
        Ok(Server { stop: Some(tx), thread: Some(thread) })
    }

    /// Stop accepting, close all connections and wait for the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: oneshot::Receiver<()>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            _ = &mut stop => return,
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
        };
        let stream = tokio::select! {
            _ = &mut stop => return,
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of descriptors and the like: say so once, back off, keep serving.
                    warn_once("metrics-accept", &format!("metrics endpoint: accepting a connection failed: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            serve_connection(stream, shared).await;
            drop(permit);
        });
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let svc = service_fn(move |req: Request<Incoming>| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(respond(&shared, &req)) }
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .serve_connection(TokioIo::new(stream), svc);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = tokio::time::sleep(CONN_LIFETIME) => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
        }
    }
}

fn respond(shared: &Shared, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    if path != "/metrics" && path != "/" {
        return plain(StatusCode::NOT_FOUND, "not found; metrics are at /metrics\n");
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if path == "/" {
        let mut r = Response::new(Full::new(Bytes::from_static(INDEX.as_bytes())));
        r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        return r;
    }
    let om = wants_openmetrics(req.headers().get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()));
    match shared.exposition(om) {
        Ok((body, content_type)) => {
            let mut r = Response::new(Full::new(body));
            r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            r
        }
        Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("encoding metrics failed: {e}\n")),
    }
}

fn plain(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// Content negotiation: OpenMetrics when the client ranks `application/openmetrics-text` at
/// least as high as the text format (Prometheus does), the text format otherwise.
pub fn wants_openmetrics<'a>(accept: impl Iterator<Item = &'a str>) -> bool {
    let (mut om, mut text) = (0.0_f64, 0.0_f64);
    for range in accept.flat_map(|h| h.split(',')) {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
            .find_map(|q| q.parse::<f64>().ok())
            .unwrap_or(1.0);
        match media.as_str() {
            "application/openmetrics-text" => om = om.max(q),
            "text/plain" | "text/*" | "*/*" => text = text.max(q),
            _ => {}
        }
    }
    om > 0.0 && om >= text
}

/// The address the server actually listens on (`--listen 127.0.0.1:0` picks a free port).
pub fn local_addr(l: &std::net::TcpListener, asked: SocketAddr) -> SocketAddr {
    l.local_addr().unwrap_or(asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics([prom].into_iter()));
        assert!(!wants_openmetrics(["*/*"].into_iter()));
        assert!(!wants_openmetrics(std::iter::empty()));
        assert!(!wants_openmetrics(["text/plain"].into_iter()));
        assert!(wants_openmetrics(["application/openmetrics-text"].into_iter()));
        assert!(!wants_openmetrics(["application/openmetrics-text;q=0.2, text/plain"].into_iter()));
        assert!(!wants_openmetrics(["application/openmetrics-text;q=0"].into_iter()));
    }
}
