//! A TCP proxy on `127.0.0.1:<free port>` in front of a real server, which forwards, stalls
//! (connections stay open, no byte moves) or drops every connection, may delay every reply,
//! and may move to another server (as a virtual IP follows a failover), and counts the
//! connections it accepts. The slow tier's fault tests drive it; the fast tier counts a
//! store's connections with it. Include with `#[path = "../common/proxy.rs"] mod proxy;`,
//! beside `servers`.
#![allow(dead_code)] // each test file uses what it needs

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

type BoxError = Box<dyn std::error::Error>;

const FORWARD: u8 = 0;
const STALL: u8 = 1;
const DROP: u8 = 2;

/// A TCP proxy on `127.0.0.1:<free port>` in front of one server. Threads only (one acceptor,
/// two pumps per connection); everything stops when it is dropped.
pub struct Proxy {
    port: u16,
    shared: Arc<ProxyShared>,
    acceptor: Option<JoinHandle<()>>,
}

struct ProxyShared {
    target: Mutex<SocketAddr>,
    mode: AtomicU8,
    /// How long each chunk from the server is held before the client gets it, in ms.
    reply_delay_ms: AtomicU64,
    closing: AtomicBool,
    accepted: AtomicU64,
    /// Both ends of every connection, to close them at once.
    streams: Mutex<Vec<TcpStream>>,
    pumps: Mutex<Vec<JoinHandle<()>>>,
}

impl Proxy {
    /// A proxy forwarding to `target`.
    pub fn start(target: SocketAddr) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(ProxyShared {
            target: Mutex::new(target),
            mode: AtomicU8::new(FORWARD),
            reply_delay_ms: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            accepted: AtomicU64::new(0),
            streams: Mutex::new(Vec::new()),
            pumps: Mutex::new(Vec::new()),
        });
        let acceptor = std::thread::Builder::new().name("fault-proxy".into()).spawn({
            let shared = Arc::clone(&shared);
            move || shared.accept_loop(&listener)
        })?;
        Ok(Proxy { port, shared, acceptor: Some(acceptor) })
    }

    /// A proxy in front of the server a URL names (`scheme://[user@]host[:port]/…`), and the
    /// same URL pointing at the proxy.
    pub fn for_url(url: &str, default_port: u16) -> Result<(Proxy, String), BoxError> {
        use std::net::ToSocketAddrs;
        let (host, port) = crate::servers::host_port(url, default_port).ok_or_else(|| format!("no host in {url}"))?;
        let target = (host.as_str(), port).to_socket_addrs()?.next().ok_or_else(|| format!("{host} has no address"))?;
        let proxy = Proxy::start(target)?;
        let proxied = with_address(url, &format!("127.0.0.1:{}", proxy.port())).ok_or("a URL with an authority")?;
        Ok((proxy, proxied))
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::Relaxed)
    }

    /// No byte moves in either direction; connections stay open, new ones are accepted and
    /// connected to the server, and wait too.
    pub fn stall(&self) {
        self.shared.mode.store(STALL, Ordering::SeqCst);
    }

    /// Every connection is closed, and every new one closed as soon as it is accepted.
    pub fn drop_all(&self) {
        self.shared.mode.store(DROP, Ordering::SeqCst);
        self.shared.close_all();
    }

    /// Every reply reaches the client `delay` after the server sent it (each chunk is held
    /// that long, in order, to within 10 ms), on open connections and new ones, until told
    /// another delay (zero: none). Requests go on at once.
    pub fn delay_replies(&self, delay: Duration) {
        self.shared.reply_delay_ms.store(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    /// Forwards again (stalled connections go on where they stopped).
    pub fn resume(&self) {
        self.shared.mode.store(FORWARD, Ordering::SeqCst);
    }

    /// Forwards new connections to `target` from now on, and closes the open ones: clients
    /// reach the other server once they connect again, as through a virtual IP moved to it.
    pub fn retarget(&self, target: SocketAddr) {
        *self.shared.target.lock().unwrap_or_else(|p| p.into_inner()) = target;
        self.shared.close_all();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.shared.close_all();
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        let pumps = std::mem::take(&mut *self.shared.pumps.lock().unwrap_or_else(|p| p.into_inner()));
        for pump in pumps {
            let _ = pump.join();
        }
    }
}

impl ProxyShared {
    fn accept_loop(self: &Arc<Self>, listener: &TcpListener) {
        while !self.closing.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((client, _)) => {
                    self.accepted.fetch_add(1, Ordering::Relaxed);
                    // A connection that fails to open is closed: the client sees it end.
                    let _ = self.open(client);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }

    fn open(self: &Arc<Self>, client: TcpStream) -> std::io::Result<()> {
        client.set_nonblocking(false)?;
        if self.mode.load(Ordering::SeqCst) == DROP {
            return client.shutdown(std::net::Shutdown::Both);
        }
        let target = *self.target.lock().unwrap_or_else(|p| p.into_inner());
        let server = TcpStream::connect_timeout(&target, Duration::from_secs(2))?;
        for stream in [&client, &server] {
            stream.set_read_timeout(Some(Duration::from_millis(10)))?;
            stream.set_write_timeout(Some(Duration::from_millis(50)))?;
            stream.set_nodelay(true)?;
        }
        self.streams.lock().unwrap_or_else(|p| p.into_inner()).extend([client.try_clone()?, server.try_clone()?]);
        let up = {
            let (shared, from, to) = (Arc::clone(self), client.try_clone()?, server.try_clone()?);
            std::thread::Builder::new().name("fault-proxy-up".into()).spawn(move || shared.pump(from, to, false))?
        };
        let down = {
            let shared = Arc::clone(self);
            std::thread::Builder::new()
                .name("fault-proxy-down".into())
                .spawn(move || shared.pump(server, client, true))?
        };
        let mut pumps = self.pumps.lock().unwrap_or_else(|p| p.into_inner());
        pumps.retain(|pump| !pump.is_finished());
        pumps.extend([up, down]);
        Ok(())
    }

    fn close_all(&self) {
        for stream in self.streams.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Waits while stalled; `false` once the connection is to be closed.
    fn may_forward(&self) -> bool {
        loop {
            if self.closing.load(Ordering::SeqCst) {
                return false;
            }
            match self.mode.load(Ordering::SeqCst) {
                FORWARD => return true,
                DROP => return false,
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }

    /// Copies `from` to `to` until either ends or the proxy drops them. A chunk read just as
    /// the stall began is held until it ends. `replies`: the server's side, whose chunks are
    /// held for the reply delay.
    fn pump(&self, mut from: TcpStream, mut to: TcpStream, replies: bool) {
        let timed_out = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
        let mut buf = vec![0u8; 16 * 1024];
        // Chunks read and not yet written, each with the instant it may go.
        let mut held: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
        let mut ended = false;
        'copy: while self.may_forward() {
            while held.front().is_some_and(|(due, _)| *due <= Instant::now()) {
                let (_, chunk) = held.pop_front().expect("a chunk");
                if !self.send(&mut to, &chunk) {
                    break 'copy;
                }
            }
            if ended {
                match held.front() {
                    Some((due, _)) => std::thread::sleep(due.saturating_duration_since(Instant::now())),
                    None => break,
                }
                continue;
            }
            let n = match from.read(&mut buf) {
                Ok(0) => {
                    ended = true;
                    continue;
                }
                Ok(n) => n,
                Err(e) if timed_out(&e) => continue,
                Err(_) => break,
            };
            let delay = if replies { self.reply_delay() } else { Duration::ZERO };
            held.push_back((Instant::now() + delay, buf[..n].to_vec()));
        }
        let _ = from.shutdown(std::net::Shutdown::Both);
        let _ = to.shutdown(std::net::Shutdown::Both);
    }

    fn reply_delay(&self) -> Duration {
        Duration::from_millis(self.reply_delay_ms.load(Ordering::SeqCst))
    }

    /// Writes `chunk` to `to` while the proxy forwards; `false` once it stopped.
    fn send(&self, to: &mut TcpStream, chunk: &[u8]) -> bool {
        let timed_out = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
        let mut sent = 0;
        while sent < chunk.len() {
            if !self.may_forward() {
                return false;
            }
            match to.write(&chunk[sent..]) {
                Ok(0) => return false,
                Ok(k) => sent += k,
                Err(e) if timed_out(&e) => {}
                Err(_) => return false,
            }
        }
        true
    }
}

/// `url` with its `host[:port]` replaced by `address`, user and path kept.
pub fn with_address(url: &str, address: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let user = authority.rsplit_once('@').map_or(String::new(), |(user, _)| format!("{user}@"));
    Some(format!("{scheme}://{user}{address}{tail}"))
}
