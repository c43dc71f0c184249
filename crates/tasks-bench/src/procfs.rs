//! Readings from `/proc` (Linux): a process's resident memory and CPU time, each CPU's busy
//! time, and the CPU model.

use std::collections::BTreeMap;
use std::fs;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

fn read(path: &str) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// Resident set size (`VmRSS` of `/proc/<pid>/status`) in bytes.
pub(crate) fn rss_bytes(pid: u32) -> Result<u64, String> {
    parse_vm_rss(&read(&format!("/proc/{pid}/status"))?).ok_or("no VmRSS line".into())
}

/// User plus system CPU time of process (or thread: `<pid>/task/<tid>`) `pid`, from its `stat`.
pub(crate) fn cpu_time(pid: &str) -> Result<Duration, String> {
    let ticks = parse_cpu_ticks(&read(&format!("/proc/{pid}/stat"))?, 11);
    ticks
        .map(ticks_to_duration)
        .ok_or(format!("/proc/{pid}/stat: malformed"))
}

/// The CPU time of each process of `pids` that can still be read (others have ended).
pub(crate) fn cpu_times(pids: &[u32]) -> BTreeMap<u32, Duration> {
    let times = pids.iter().map(|&pid| (pid, cpu_time(&pid.to_string())));
    times
        .filter_map(|(pid, time)| Some((pid, time.ok()?)))
        .collect()
}

/// CPU time the processes of `before` used until `after` (both from [`cpu_times`]); a process
/// missing from `after` ended meanwhile and counts as having used nothing more.
pub(crate) fn cpu_used(
    before: &BTreeMap<u32, Duration>,
    after: &BTreeMap<u32, Duration>,
) -> Duration {
    let used = |(pid, then): (&u32, &Duration)| after.get(pid).map(|now| now.saturating_sub(*then));
    before.iter().filter_map(used).sum()
}

/// CPU time of the thread of process `pid` whose name (`comm`, at most 15 bytes) is `name`;
/// `None` when there is no such thread.
pub(crate) fn thread_cpu_time(pid: u32, name: &str) -> Result<Option<Duration>, String> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).map_err(|e| e.to_string())?;
    for tid in tasks.filter_map(|entry| entry.ok()?.file_name().into_string().ok()) {
        // A thread that ended meanwhile has no `comm`.
        if read(&format!("/proc/{pid}/task/{tid}/comm")).is_ok_and(|comm| comm.trim_end() == name) {
            return cpu_time(&format!("{pid}/task/{tid}")).map(Some);
        }
    }
    Ok(None)
}

/// User plus system CPU time of this process's children that have ended and been waited for
/// (`cutime + cstime` of `/proc/self/stat`): it grows by a child's whole CPU time once the child
/// is reaped.
pub(crate) fn children_cpu_time() -> Result<Duration, String> {
    let ticks = parse_cpu_ticks(&read("/proc/self/stat")?, 13);
    ticks
        .map(ticks_to_duration)
        .ok_or("/proc/self/stat: malformed".into())
}

/// Busy time of each CPU (index = CPU number) from the `cpuN` lines of `/proc/stat`: every
/// state but idle and IO wait. It includes the kernel's network work (softirq), which on
/// loopback is a large part of each request and is not always charged to a process, and the
/// time of any other process on that CPU.
pub(crate) fn per_cpu_busy() -> Result<Vec<Duration>, String> {
    let ticks = parse_per_cpu_busy(&read("/proc/stat")?).ok_or("/proc/stat: malformed")?;
    Ok(ticks.into_iter().map(ticks_to_duration).collect())
}

/// The CPU model (`model name` of `/proc/cpuinfo`) and the number of logical CPUs listed.
pub(crate) fn cpu_model() -> (String, usize) {
    let info = read("/proc/cpuinfo").unwrap_or_default();
    let models = info
        .lines()
        .filter_map(|line| line.strip_prefix("model name"));
    let models: Vec<&str> = models
        .filter_map(|line| Some(line.split_once(':')?.1.trim()))
        .collect();
    (
        models.first().copied().unwrap_or("unknown").to_owned(),
        models.len(),
    )
}

/// `ticks` of `USER_HZ`, the unit of the `/proc` times (`getconf CLK_TCK`, else 100).
fn ticks_to_duration(ticks: u64) -> Duration {
    static HZ: OnceLock<u64> = OnceLock::new();
    let hz = HZ.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok();
        let hz = out.and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok());
        hz.filter(|&hz| hz > 0).unwrap_or(100)
    });
    Duration::from_secs_f64(ticks as f64 / *hz as f64)
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?;
    Some(line.split_whitespace().next()?.parse::<u64>().ok()? * 1024)
}

/// Two CPU times in clock ticks, summed: `utime + stime` (`skip` 11) or `cutime + cstime` (`skip`
/// 13). Fields after the parenthesized command name (which may hold spaces): state is the
/// first, utime the 12th, stime the 13th, cutime the 14th, cstime the 15th.
fn parse_cpu_ticks(stat: &str, skip: usize) -> Option<u64> {
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(skip);
    Some(fields.next()?.parse::<u64>().ok()? + fields.next()?.parse::<u64>().ok()?)
}

/// Busy ticks of each `cpuN` line, indexed by N: the first eight fields (user, nice, system,
/// idle, iowait, irq, softirq, steal) less idle and iowait; guest time is already in user.
fn parse_per_cpu_busy(stat: &str) -> Option<Vec<u64>> {
    let mut busy = Vec::new();
    for line in stat.lines() {
        let mut fields = line.split_whitespace();
        // Not the aggregate `cpu` line, nor any other line.
        let Some(Ok(index)) = fields
            .next()
            .and_then(|name| name.strip_prefix("cpu"))
            .map(str::parse::<usize>)
        else {
            continue;
        };
        let values: Vec<u64> = fields
            .take(8)
            .map(|field| field.parse().ok())
            .collect::<Option<_>>()?;
        busy.resize(busy.len().max(index + 1), 0);
        busy[index] = values.iter().sum::<u64>() - values.get(3)? - values.get(4)?;
    }
    Some(busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let status = "Name:\tx\nVmPeak:\t  10 kB\nVmRSS:\t    2048 kB\nThreads: 2\n";
        assert_eq!(
            (parse_vm_rss(status), parse_vm_rss("Name: x\n")),
            (Some(2048 * 1024), None)
        );
        let stat = "42 (a b) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 3 4 20 0 1 0 1 1 1";
        assert_eq!(
            (parse_cpu_ticks(stat, 11), parse_cpu_ticks(stat, 13)),
            (Some(12), Some(7)),
            "past a command name with spaces"
        );
        let stat = "cpu  10 1 5 1000 7 2 3 4 9 0\ncpu0 5 0 2 500 3 1 1 2 0 0\n\
                    cpu1 5 1 3 500 4 1 2 2 9 0\nintr 1 2\n";
        assert_eq!(parse_per_cpu_busy(stat), Some(vec![11, 14]));
    }

    #[test]
    fn sums_the_cpu_time_of_processes_still_running() {
        let ms = Duration::from_millis;
        let before = BTreeMap::from([(1, ms(10)), (2, ms(20)), (3, ms(5))]);
        let after = BTreeMap::from([(1, ms(15)), (3, ms(9)), (4, ms(100))]);
        assert_eq!(cpu_used(&before, &after), ms(9));
        let own = cpu_times(&[std::process::id(), u32::MAX]);
        assert_eq!(own.len(), 1, "an id that is no process is left out");
    }

    #[test]
    fn reads_this_machine() {
        let pid = std::process::id();
        assert!(rss_bytes(pid).unwrap() > 0 && cpu_time(&pid.to_string()).is_ok());
        let before = children_cpu_time().unwrap();
        let spin = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";
        assert!(Command::new("sh")
            .args(["-c", spin])
            .status()
            .unwrap()
            .success());
        assert!(
            children_cpu_time().unwrap() > before,
            "a reaped child's CPU time counts"
        );
        assert!(thread_cpu_time(pid, "no such thread").unwrap().is_none());
        assert!(!per_cpu_busy().unwrap().is_empty());
    }
}
