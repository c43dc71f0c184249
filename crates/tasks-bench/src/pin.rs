//! CPU pinning with `taskset` (util-linux): the load generator pins itself, server children are
//! started under `taskset -c <cpus>`. No `unsafe`: `taskset -a -p` sets the affinity of every
//! thread of this process, and threads created later inherit it.

use std::process::{Command, Stdio};

/// Which CPUs the servers and the load generator run on; empty sets mean unpinned.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pinning {
    server: Vec<usize>,
    client: Vec<usize>,
    server_list: String,
}

impl Pinning {
    /// Pins this process to `client` and arranges for servers to run on `server` (both
    /// `taskset` CPU lists such as `0` or `2-3,5`) when the lists parse, `taskset` works and
    /// the machine has at least two CPUs; otherwise returns an unpinned [`Pinning`].
    pub(crate) fn apply(server: &str, client: &str) -> Pinning {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let (Some(server_set), Some(client_set)) = (parse_cpu_list(server), parse_cpu_list(client))
        else {
            return Pinning::default();
        };
        let pid = std::process::id().to_string();
        let taskset = |args: &[&str]| {
            let status = Command::new("taskset")
                .args(args)
                .stdout(Stdio::null())
                .status();
            status.is_ok_and(|status| status.success())
        };
        if cpus < 2 || !taskset(&["--version"]) || !taskset(&["-a", "-p", "-c", client, &pid]) {
            return Pinning::default();
        }
        let server_list = server.to_owned();
        Pinning {
            server: server_set,
            client: client_set,
            server_list,
        }
    }

    /// The servers' CPUs (empty when unpinned).
    pub(crate) fn server_cpus(&self) -> &[usize] {
        &self.server
    }

    /// The load generator's CPUs (empty when unpinned).
    pub(crate) fn client_cpus(&self) -> &[usize] {
        &self.client
    }

    /// A command running `program`, under `taskset -c <server cpus>` when pinned.
    pub(crate) fn server_command(&self, program: &std::path::Path) -> Command {
        if self.server.is_empty() {
            return Command::new(program);
        }
        let mut command = Command::new("taskset");
        command.arg("-c").arg(&self.server_list).arg(program);
        command
    }

    /// A human description for the report.
    pub(crate) fn describe(&self) -> String {
        if self.server.is_empty() {
            return "not pinned (taskset unavailable, fewer than 2 CPUs, or --no-pin)".to_owned();
        }
        let (server, list, client) = (&self.server, &self.server_list, &self.client);
        format!("servers on CPU {server:?} (`taskset -c {list}`), load generator on CPU {client:?} (`taskset -a -p -c <list> <own pid>`)")
    }
}

/// Parses a `taskset` CPU list: comma-separated numbers and inclusive ranges (`0`, `2-3,5`).
pub(crate) fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').map(str::trim) {
        let (low, high) = part.split_once('-').unwrap_or((part, part));
        let (low, high): (usize, usize) = (low.trim().parse().ok()?, high.trim().parse().ok()?);
        if low > high {
            return None;
        }
        cpus.extend(low..=high);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_lists() {
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("2-3,5,3"), Some(vec![2, 3, 5]));
        assert_eq!(parse_cpu_list("3-2"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list(""), None);
    }

    #[test]
    fn unpinned_servers_run_directly() {
        let command = Pinning::default().server_command(std::path::Path::new("/bin/true"));
        assert_eq!(command.get_program(), "/bin/true");
    }
}
