//! The server secret file: the keys of a server's MRTR `requestState` and of its scopes derive
//! from its secret, so with a durable store the secret must outlive the process (tasks kept
//! across a restart must stay reachable by their scope, and in-flight MRTR states must keep
//! verifying), and nodes sharing a database must share it (an MRTR retry may reach another
//! node). [`load_or_create_secret`] keeps it in a file.

use std::fs::OpenOptions;
use std::io::{self, Read as _, Write as _};
#[cfg(unix)]
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// Bytes of a secret [`load_or_create_secret`] creates (32).
pub const SECRET_BYTES: usize = 32;
/// The shortest secret accepted from a file (16 bytes).
pub const MIN_SECRET_BYTES: usize = 16;

/// Reads the server secret in the file at `path`, or, when there is no such file, creates it
/// owner-only (mode 0600) with [`SECRET_BYTES`] random bytes and returns those. Give the
/// result to the server builder (`ServerBuilder::secret` in tasks-http).
///
/// Creation is exclusive and atomic: the bytes are written to a fresh temporary file beside
/// `path`, synced, then hard-linked into place only if nothing is there yet, so processes
/// starting together on one shared file (nodes on a shared volume, or a restart racing a
/// start) all read the same secret, and a crash never leaves a partly written one.
///
/// # Errors
/// * when the file can neither be read nor created (e.g. its directory does not exist);
/// * [`io::ErrorKind::PermissionDenied`] when, on Unix, the file can be read or written by
///   others than its owner (group or world bits set: `chmod 600` it);
/// * [`io::ErrorKind::InvalidData`] when it holds fewer than [`MIN_SECRET_BYTES`] bytes.
pub fn load_or_create_secret(path: &Path) -> io::Result<Vec<u8>> {
    if !path.exists() {
        create(path)?;
    }
    read(path)
}

/// Writes a new secret beside `path` and links it into place unless a secret is there already.
fn create(path: &Path) -> io::Result<()> {
    let mut tag = [0u8; 8];
    getrandom::fill(&mut tag).map_err(|error| io::Error::other(error.to_string()))?;
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{:016x}.tmp", u64::from_le_bytes(tag)));
    let temporary = std::path::PathBuf::from(name);
    let written = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(&temporary)?;
        let mut secret = vec![0u8; SECRET_BYTES];
        getrandom::fill(&mut secret).map_err(|error| io::Error::other(error.to_string()))?;
        file.write_all(&secret)?;
        file.sync_all()?;
        match std::fs::hard_link(&temporary, path) {
            Err(error) if error.kind() != io::ErrorKind::AlreadyExists => Err(error),
            _ => Ok(()),
        }
    })();
    let _ = std::fs::remove_file(&temporary);
    written
}

fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut secret = Vec::new();
    let mut file = std::fs::File::open(path)?;
    #[cfg(unix)]
    {
        let mode = file.metadata()?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "secret file {} can be read or written by others than its owner (mode \
                     {mode:o}): chmod 600 it",
                    path.display()
                ),
            ));
        }
    }
    file.read_to_end(&mut secret)?;
    if secret.len() < MIN_SECRET_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "secret file {} holds {} bytes; it needs at least {MIN_SECRET_BYTES}",
                path.display(),
                secret.len()
            ),
        ));
    }
    Ok(secret)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn creates_an_owner_only_secret_once_and_reads_it_back() {
        let dir = std::env::temp_dir().join(format!("fixture-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("server.secret");
        let _ = std::fs::remove_file(&path);
        let first = load_or_create_secret(&path).unwrap();
        assert_eq!(first.len(), SECRET_BYTES);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            load_or_create_secret(&path).unwrap(),
            first,
            "read back, not redrawn"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        std::fs::write(&path, b"short").unwrap();
        let error = load_or_create_secret(&path).unwrap_err();
        assert!(error.to_string().contains("at least 16"), "{error}");
        std::fs::write(&path, [7u8; 32]).unwrap();
        for mode in [0o640, 0o604, 0o620] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let error = load_or_create_secret(&path).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::PermissionDenied, "{mode:o}");
            assert!(error.to_string().contains("chmod 600"), "{error}");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert_eq!(load_or_create_secret(&path).unwrap(), [7u8; 32]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nodes_creating_one_secret_together_all_read_the_same() {
        let dir = std::env::temp_dir().join(format!("fixture-secret-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shared.secret");
        let _ = std::fs::remove_file(&path);
        let secrets: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| load_or_create_secret(&path).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            secrets.iter().all(|s| *s == secrets[0]),
            "one secret for all"
        );
        assert_eq!(secrets[0].len(), SECRET_BYTES);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
