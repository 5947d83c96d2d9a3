//! The listening socket of `snowflake serve`: the one systemd passed (socket activation), else
//! the configured address bound here, with `SO_REUSEPORT` when asked (`--reuse-port`).
//!
//! Both keep a port open across a restart. Under socket activation the socket is systemd's:
//! it stays open while the service restarts, and connections wait in its queue for the next
//! process. With `--reuse-port` the new process binds beside the old one, the kernel spreads
//! new connections over both, and the old one's drain then takes it out of the group.

use std::net::SocketAddr;

use crate::StartError;
use crate::config::Config;

/// The first file descriptor systemd passes (`SD_LISTEN_FDS_START`).
const LISTEN_FDS_START: i32 = 3;

/// The socket systemd passed to this process, if any: taken before anything else opens a
/// file descriptor (the runtime's own would take number 3 when systemd passed none).
pub(crate) fn systemd_socket() -> Result<Option<std::net::TcpListener>, StartError> {
    from_systemd(&|var| std::env::var(var).ok())
}

/// The socket to serve on: `passed` (systemd's), else `config.listen` bound here. Called in
/// the runtime, once per process, from [`crate::run`].
pub(crate) fn listener(
    config: &Config,
    passed: Option<std::net::TcpListener>,
) -> Result<tokio::net::TcpListener, StartError> {
    let listener = match passed {
        Some(listener) => {
            let addr = listener.local_addr().map_err(|e| systemd_error(&e))?;
            tracing::info!(%addr, "listening on the socket systemd passed (LISTEN_FDS); --listen is not used");
            listener
        }
        None => bind(config.listen, config.reuse_port)
            .map_err(|e| StartError(format!("cannot listen on {}: {e}", config.listen)))?,
    };
    listener.set_nonblocking(true).map_err(|e| StartError(format!("the listening socket: {e}")))?;
    tokio::net::TcpListener::from_std(listener).map_err(|e| StartError(format!("the listening socket: {e}")))
}

fn systemd_error(e: &std::io::Error) -> StartError {
    StartError(format!("the socket systemd passed (file descriptor {LISTEN_FDS_START}) is not a TCP socket: {e}"))
}

/// `addr` bound as tokio binds it (`SO_REUSEADDR`, a backlog of 1024), and with
/// `SO_REUSEPORT` when `reuse_port`.
fn bind(addr: SocketAddr, reuse_port: bool) -> std::io::Result<std::net::TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    #[cfg(unix)]
    {
        socket.set_reuseaddr(true)?;
        if reuse_port {
            socket.set_reuseport(true)?;
        }
    }
    #[cfg(not(unix))]
    if reuse_port {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "--reuse-port needs SO_REUSEPORT (Linux, BSD, macOS)",
        ));
    }
    socket.bind(addr)?;
    let listener = socket.listen(1024)?;
    listener.into_std()
}

/// The socket systemd passed to this process, by the `sd_listen_fds` protocol: `LISTEN_PID`
/// is this process, `LISTEN_FDS` the number of sockets from file descriptor 3 on. `None`
/// when the variables are unset or meant for another process (a parent that did not unset
/// them); an error for more than one socket, since the server listens on one.
fn from_systemd(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<std::net::TcpListener>, StartError> {
    let ours = env("LISTEN_PID").and_then(|pid| pid.trim().parse::<u32>().ok()) == Some(std::process::id());
    if !ours {
        return Ok(None);
    }
    let count = env("LISTEN_FDS").unwrap_or_default();
    match count.trim().parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(1) => take_systemd_socket().map(Some),
        _ => Err(StartError(format!(
            "systemd passed LISTEN_FDS={count:?}: snowflake serve listens on one socket; give its .socket unit one ListenStream="
        ))),
    }
}

/// File descriptor 3, owned from now on.
#[cfg(unix)]
#[allow(unsafe_code)]
fn take_systemd_socket() -> Result<std::net::TcpListener, StartError> {
    use std::os::fd::{FromRawFd as _, OwnedFd};
    use std::sync::atomic::{AtomicBool, Ordering};

    static TAKEN: AtomicBool = AtomicBool::new(false);
    if TAKEN.swap(true, Ordering::SeqCst) {
        return Err(StartError("the socket systemd passed is already in use by this process".to_owned()));
    }
    // SAFETY: by the protocol checked above (LISTEN_PID is this process, LISTEN_FDS=1), systemd
    // opened file descriptor 3 for this process and nothing else in it owns that descriptor;
    // `TAKEN` makes this the only place that takes it, once.
    let fd = unsafe { OwnedFd::from_raw_fd(LISTEN_FDS_START) };
    let listener = std::net::TcpListener::from(fd);
    // Not a socket (a descriptor left open by whatever started the process): refused, and
    // left open, since it is not ours to close.
    if let Err(e) = listener.local_addr() {
        let _ = std::os::fd::IntoRawFd::into_raw_fd(listener);
        return Err(systemd_error(&e));
    }
    Ok(listener)
}

#[cfg(not(unix))]
fn take_systemd_socket() -> Result<std::net::TcpListener, StartError> {
    Err(StartError("socket activation (LISTEN_FDS) needs a Unix system".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systemd_variables_of_another_process_or_none_are_ignored() {
        let none = |_: &str| None;
        assert!(from_systemd(&none).unwrap().is_none());
        let other = |var: &str| match var {
            "LISTEN_PID" => Some("1".to_owned()),
            "LISTEN_FDS" => Some("1".to_owned()),
            _ => None,
        };
        assert!(from_systemd(&other).unwrap().is_none(), "meant for PID 1, not this process");
        let two = |var: &str| match var {
            "LISTEN_PID" => Some(std::process::id().to_string()),
            "LISTEN_FDS" => Some("2".to_owned()),
            _ => None,
        };
        let e = from_systemd(&two).unwrap_err();
        assert!(e.0.contains("listens on one socket"), "{e}");
    }

    #[tokio::test]
    async fn two_servers_bind_one_address_with_reuse_port_only() {
        let first = bind("127.0.0.1:0".parse().unwrap(), true).unwrap();
        let addr = first.local_addr().unwrap();
        let second = bind(addr, true).expect("a second socket binds beside the first with SO_REUSEPORT");
        assert_eq!(second.local_addr().unwrap(), addr);
        let refused = bind(addr, false).expect_err("without SO_REUSEPORT the address is taken");
        assert_eq!(refused.kind(), std::io::ErrorKind::AddrInUse);
    }
}
