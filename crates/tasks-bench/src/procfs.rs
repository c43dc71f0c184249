//! Readings from `/proc` (Linux): a process's resident memory and CPU time, each CPU's busy
//! time, and the CPU model.

use std::fs;
use std::io;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// Resident set size (`VmRSS` of `/proc/<pid>/status`) in bytes.
pub(crate) fn rss_bytes(pid: u32) -> io::Result<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_vm_rss(&status).ok_or_else(|| io::Error::other("no VmRSS line"))
}

/// User plus system CPU time of process `pid` (all its threads), from `/proc/<pid>/stat`.
pub(crate) fn cpu_time(pid: u32) -> io::Result<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let ticks = parse_cpu_ticks(&stat).ok_or_else(|| io::Error::other("malformed stat"))?;
    Ok(ticks_to_duration(ticks))
}

/// The CPU time of each process of `pids` that can still be read (others have ended).
pub(crate) fn cpu_times(pids: &[u32]) -> Vec<(u32, Duration)> {
    pids.iter()
        .filter_map(|&pid| cpu_time(pid).ok().map(|time| (pid, time)))
        .collect()
}

/// CPU time the processes of `before` used until `after` (both from [`cpu_times`]); a process
/// missing from `after` ended meanwhile and counts as having used nothing more.
pub(crate) fn cpu_used(before: &[(u32, Duration)], after: &[(u32, Duration)]) -> Duration {
    before
        .iter()
        .map(|&(pid, then)| {
            after
                .iter()
                .find(|(other, _)| *other == pid)
                .map_or(Duration::ZERO, |&(_, now)| now.saturating_sub(then))
        })
        .sum()
}

/// User plus system CPU time of the thread of process `pid` whose name (`comm`, at most 15
/// bytes) is `name`, from `/proc/<pid>/task/<tid>/stat`; `None` when there is no such thread.
pub(crate) fn thread_cpu_time(pid: u32, name: &str) -> io::Result<Option<Duration>> {
    for entry in fs::read_dir(format!("/proc/{pid}/task"))? {
        let dir = entry?.path();
        let Ok(comm) = fs::read_to_string(dir.join("comm")) else {
            continue; // the thread ended meanwhile
        };
        if comm.trim_end() != name {
            continue;
        }
        let stat = fs::read_to_string(dir.join("stat"))?;
        let ticks = parse_cpu_ticks(&stat).ok_or_else(|| io::Error::other("malformed stat"))?;
        return Ok(Some(ticks_to_duration(ticks)));
    }
    Ok(None)
}

/// Runs `command` (named `name` in errors) to its end with its output captured, reading its
/// CPU time every 20 ms while it runs (the last reading counts: once it has exited, `/proc` no
/// longer has it); its output and that CPU time. Both pipes are read while it runs, so a
/// talkative child cannot block on a full pipe; one still running after `deadline` is killed
/// and the run fails.
pub(crate) async fn run_timing_cpu(
    mut command: tokio::process::Command,
    name: &str,
    deadline: Duration,
) -> Result<(std::process::Output, Duration), String> {
    let child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{name}: {e}"))?;
    let pid = child.id().unwrap_or(0);
    let output = child.wait_with_output();
    tokio::pin!(output);
    let mut cpu = Duration::ZERO;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    let give_up = tokio::time::sleep(deadline);
    tokio::pin!(give_up);
    loop {
        tokio::select! {
            done = &mut output => {
                let output = done.map_err(|e| format!("{name}: {e}"))?;
                return Ok((output, cpu));
            }
            _ = tick.tick() => {
                if let Ok(now) = cpu_time(pid) {
                    cpu = now;
                }
            }
            () = &mut give_up => {
                // Dropping the output future drops the child, which kills it.
                return Err(format!("{name} still ran after {} s: killed", deadline.as_secs()));
            }
        }
    }
}

/// Busy time of each CPU (index = CPU number) from the `cpuN` lines of `/proc/stat`: every
/// state but idle and IO wait. It includes the kernel's network work (softirq), which on
/// loopback is a large part of each request and is not always charged to a process, and the
/// time of any other process on that CPU.
pub(crate) fn per_cpu_busy() -> io::Result<Vec<Duration>> {
    let stat = fs::read_to_string("/proc/stat")?;
    let ticks = parse_per_cpu_busy(&stat).ok_or_else(|| io::Error::other("malformed stat"))?;
    Ok(ticks.into_iter().map(ticks_to_duration).collect())
}

/// The CPU model (`model name` of `/proc/cpuinfo`) and the number of logical CPUs listed.
pub(crate) fn cpu_model() -> (String, usize) {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let models: Vec<&str> = info
        .lines()
        .filter(|line| line.starts_with("model name"))
        .filter_map(|line| line.split_once(':').map(|(_, v)| v.trim()))
        .collect();
    let model = models.first().copied().unwrap_or("unknown").to_owned();
    (model, models.len())
}

fn ticks_to_duration(ticks: u64) -> Duration {
    Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64)
}

/// `USER_HZ`, the unit of the `/proc` times (`getconf CLK_TCK`, else 100).
fn clock_ticks() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.trim().parse().ok())
            .filter(|&ticks| ticks > 0)
            .unwrap_or(100)
    })
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `utime + stime` in clock ticks. Fields after the parenthesized command name (which may hold
/// spaces): state is the first, utime the 12th, stime the 13th.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Busy ticks of each `cpuN` line, indexed by N: the first eight fields (user, nice, system,
/// idle, iowait, irq, softirq, steal) less idle and iowait; guest time is already in user.
fn parse_per_cpu_busy(stat: &str) -> Option<Vec<u64>> {
    let mut busy = Vec::new();
    for line in stat.lines() {
        let mut fields = line.split_whitespace();
        let Some(Ok(index)) = fields
            .next()
            .and_then(|name| name.strip_prefix("cpu"))
            .map(str::parse::<usize>)
        else {
            continue; // the aggregate `cpu` line and every other line
        };
        let values: Vec<u64> = fields
            .take(8)
            .map(|field| field.parse().ok())
            .collect::<Option<_>>()?;
        let total: u64 = values.iter().sum();
        if busy.len() <= index {
            busy.resize(index + 1, 0);
        }
        busy[index] = total - values.get(3)? - values.get(4)?;
    }
    Some(busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_vm_rss_in_bytes() {
        let status = "Name:\tx\nVmPeak:\t  10 kB\nVmRSS:\t    2048 kB\nThreads: 2\n";
        assert_eq!(parse_vm_rss(status), Some(2048 * 1024));
        assert_eq!(parse_vm_rss("Name: x\n"), None);
    }

    #[test]
    fn reads_cpu_ticks_past_a_command_name_with_spaces() {
        let stat = "42 (a b) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 1 1 1";
        assert_eq!(parse_cpu_ticks(stat), Some(12));
    }

    #[test]
    fn reads_per_cpu_busy_ticks() {
        let stat = "cpu  10 1 5 1000 7 2 3 4 9 0\n\
                    cpu0 5 0 2 500 3 1 1 2 0 0\n\
                    cpu1 5 1 3 500 4 1 2 2 9 0\n\
                    intr 1 2\n";
        assert_eq!(parse_per_cpu_busy(stat), Some(vec![11, 14]));
    }

    #[test]
    fn sums_the_cpu_time_of_processes_still_running() {
        let ms = Duration::from_millis;
        let before = [(1, ms(10)), (2, ms(20)), (3, ms(5))];
        let after = [(1, ms(15)), (3, ms(9)), (4, ms(100))];
        assert_eq!(cpu_used(&before, &after), ms(9));
        let own = cpu_times(&[std::process::id(), u32::MAX]);
        assert_eq!(own.len(), 1, "an id that is no process is left out");
    }

    #[test]
    fn reads_this_machine() {
        assert!(rss_bytes(std::process::id()).unwrap() > 0);
        assert!(cpu_time(std::process::id()).is_ok());
        assert!(thread_cpu_time(std::process::id(), "no such thread")
            .unwrap()
            .is_none());
        assert!(!per_cpu_busy().unwrap().is_empty());
    }
}
