//! The HTTP side of `--listen`: hyper's HTTP/1 server on one thread with a single-threaded tokio
//! runtime, bounded so that slow or hostile clients cost little and cannot reach the sampler.
//!
//! Why hyper and not tiny_http: tiny_http starts a thread per connection without a cap and has no
//! header-size or read-timeout settings, so a slowloris client could pile up threads. hyper
//! gives all three bounds below, and one runtime thread serves every connection as a task.
//!
//! Bounds, per connection: a request head must arrive within [`HEAD_TIMEOUT`] of its first byte,
//! a connection waiting for a request closes after [`IDLE_TIMEOUT`], and one lives at most
//! [`CONN_LIFETIME`]; request head at most [`MAX_HEAD_BYTES`] and [`MAX_HEADERS`] headers (431
//! beyond). A new client is always accepted; when that makes more than [`MAX_CONNECTIONS`], the
//! ones that have waited longest for a request are closed (those dripping a head byte by byte
//! first, then idle ones). Connections younger than [`GRACE`] are left to send their request (up
//! to [`HARD_LIMIT`] open). So a slowloris crowd cannot lock out a fresh scrape: its request
//! arrives at once and is served before the crowd's turn comes round. Only `GET`/`HEAD` on `/metrics` and `/`; other paths 404,
//! other methods 405. Request bodies are never read.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Context, Result};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::Shared;
use gpumon_util::warn_once;

/// Connections open at once; a new one beyond closes the one that has waited longest for a request.
pub(crate) const MAX_CONNECTIONS: usize = 32;
/// Largest request head (request line and headers) accepted; hyper's minimum buffer size.
pub(crate) const MAX_HEAD_BYTES: usize = 8 * 1024;
pub(crate) const MAX_HEADERS: usize = 64;
/// Time a client has to complete a request head once its first byte arrived.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// Time a connection may wait without a byte of a request (a keep-alive between scrapes).
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(15);
/// A connection this young is not closed to make room (it may be a scrape about to be served)...
pub(crate) const GRACE: Duration = Duration::from_millis(250);
/// ...unless this many are open.
pub(crate) const HARD_LIMIT: usize = 8 * MAX_CONNECTIONS;
/// How often each connection checks its own timeouts.
const WATCH_EVERY: Duration = Duration::from_millis(250);
/// Longest life of one connection; then it is closed after the response in flight.
pub(crate) const CONN_LIFETIME: Duration = Duration::from_secs(60);

const INDEX: &str = "<!doctype html>\n<html><head><title>gpumon</title></head><body>\n<h1>gpumon</h1>\n\
<p>Metrics of the running <code>gpumon record</code>: <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n";

/// The serving thread; dropped or stopped, it closes every connection.
pub(crate) struct Server {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serve on an already bound listener (bound by the caller so that errors come back at once).
    pub(crate) fn start(listener: std::net::TcpListener, shared: Arc<Shared>) -> Result<Server> {
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
    pub(crate) fn stop(mut self) {
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

/// What the server knows of one connection: when it began waiting for its next request, and
/// whether a byte of that request has arrived (milliseconds since the server started).
struct ConnState {
    waiting_since: AtomicU64,
    head_started: AtomicBool,
}

impl ConnState {
    /// How long it has waited, and for what: (waited, a head is being dripped).
    fn waiting(&self, now: u64) -> (Duration, bool) {
        let since = self.waiting_since.load(Ordering::Relaxed);
        (
            Duration::from_millis(now.saturating_sub(since)),
            self.head_started.load(Ordering::Relaxed),
        )
    }
}

/// The open connections, for the limit.
#[derive(Default)]
struct Registry {
    next_id: u64,
    conns: HashMap<u64, (Arc<ConnState>, AbortHandle)>,
}

impl Registry {
    /// Up to `n` connections to close to make room: among those that have waited at least
    /// [`GRACE`] for a request, dripped heads before idle waits, the longest waiting first. Younger
    /// ones are left to finish their request (a fresh scrape sends it at once), unless
    /// [`HARD_LIMIT`] connections are open.
    fn victims(&self, now: u64, n: usize) -> Vec<u64> {
        let any_age = self.conns.len() >= HARD_LIMIT;
        let mut c: Vec<(u64, (Duration, bool))> = self
            .conns
            .iter()
            .map(|(id, (st, _))| (*id, st.waiting(now)))
            .filter(|(_, (waited, _))| any_age || *waited >= GRACE)
            .collect();
        c.sort_by_key(|(_, (waited, head))| std::cmp::Reverse((*head, *waited)));
        c.into_iter().take(n).map(|(id, _)| id).collect()
    }
}

/// Milliseconds since `epoch`.
fn millis_since(epoch: Instant) -> u64 {
    epoch.elapsed().as_millis() as u64
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: oneshot::Receiver<()>) {
    let epoch = Instant::now();
    let reg = Arc::new(Mutex::new(Registry::default()));
    loop {
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
        let now = millis_since(epoch);
        let state = Arc::new(ConnState {
            waiting_since: AtomicU64::new(now),
            head_started: AtomicBool::new(false),
        });
        let Some(evict) = register(&reg, stream, &shared, state, epoch) else { return };
        evict.iter().for_each(AbortHandle::abort);
        // Let the new connection read its request before the next client is accepted.
        tokio::task::yield_now().await;
    }
}

/// Start serving `stream` and register it; returns the connections to close to make room (None:
/// the registry is gone).
fn register(
    reg: &Arc<Mutex<Registry>>,
    stream: TcpStream,
    shared: &Arc<Shared>,
    state: Arc<ConnState>,
    epoch: Instant,
) -> Option<Vec<AbortHandle>> {
    let mut r = reg.lock().ok()?;
    let now = millis_since(epoch);
    let excess = (r.conns.len() + 1).saturating_sub(MAX_CONNECTIONS);
    let evict: Vec<AbortHandle> = r
        .victims(now, excess)
        .into_iter()
        .filter_map(|v| r.conns.remove(&v))
        .map(|(_, h)| h)
        .collect();
    let id = r.next_id;
    r.next_id += 1;
    // One thread runs every task: the new one cannot start (and deregister) before it is registered.
    let task = tokio::spawn(serve_connection(
        stream,
        shared.clone(),
        state.clone(),
        epoch,
        Deregister(reg.clone(), id),
    ));
    r.conns.insert(id, (state, task.abort_handle()));
    Some(evict)
}

/// Removes a connection from the registry when its task ends, aborted or not.
struct Deregister(Arc<Mutex<Registry>>, u64);

impl Drop for Deregister {
    fn drop(&mut self) {
        if let Ok(mut r) = self.0.lock() {
            r.conns.remove(&self.1);
        }
    }
}

/// The client's stream, noting when a byte of a new request arrives.
struct Watched {
    inner: TcpStream,
    state: Arc<ConnState>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.state.head_started.store(true, Ordering::Relaxed);
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Resolves when the connection has waited too long for (the rest of) a request.
async fn watchdog(state: Arc<ConnState>, epoch: Instant) {
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let (waited, head) = state.waiting(millis_since(epoch));
        if waited > if head { HEAD_TIMEOUT } else { IDLE_TIMEOUT } {
            return;
        }
    }
}

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    state: Arc<ConnState>,
    epoch: Instant,
    _registered: Deregister,
) {
    let _ = stream.set_nodelay(true);
    let st = state.clone();
    let svc = service_fn(move |req: Request<Incoming>| {
        // A complete head: the wait for the next request starts with this response.
        st.head_started.store(false, Ordering::Relaxed);
        st.waiting_since.store(millis_since(epoch), Ordering::Relaxed);
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(respond(&shared, &req)) }
    });
    let io = Watched { inner: stream, state: state.clone() };
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT + IDLE_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .serve_connection(TokioIo::new(io), svc);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = watchdog(state, epoch) => {}
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
    let om =
        wants_openmetrics(req.headers().get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()));
    match shared.exposition(om) {
        Ok((body, content_type)) => {
            let mut r = Response::new(Full::new(body));
            r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            r
        }
        Err(e) => {
            plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("encoding metrics failed: {e}\n"))
        }
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
pub(crate) fn wants_openmetrics<'a>(accept: impl Iterator<Item = &'a str>) -> bool {
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
pub(crate) fn local_addr(l: &std::net::TcpListener, asked: SocketAddr) -> SocketAddr {
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
