//! The server secret file: the keys for `requestState` and for scopes derive from it, so they
//! survive a restart (a durable store keeps tasks across restarts; their scopes and in-flight
//! MRTR states must keep verifying).

use std::fs::OpenOptions;
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// Bytes of a secret the fixture creates.
const SECRET_BYTES: usize = 32;
/// The shortest secret accepted from a file.
const MIN_SECRET_BYTES: usize = 16;

/// Reads the secret in `path`, or creates the file (owner-only, 0600) with 32 random bytes
/// when it does not exist. Creation is atomic (written to a temporary file, then linked into
/// place), so nodes starting together on one shared file all read the same secret.
///
/// # Errors
/// When the file cannot be read or created, or holds fewer than 16 bytes.
pub fn load_or_create(path: &Path) -> io::Result<Vec<u8>> {
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
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
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
    if file.metadata()?.permissions().mode() & 0o077 != 0 {
        tracing::warn!(
            path = %path.display(),
            "the secret file can be read by others than its owner (chmod 600 it)"
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_an_owner_only_secret_once_and_reads_it_back() {
        let dir = std::env::temp_dir().join(format!("fixture-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("server.secret");
        let _ = std::fs::remove_file(&path);
        let first = load_or_create(&path).unwrap();
        assert_eq!(first.len(), SECRET_BYTES);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            load_or_create(&path).unwrap(),
            first,
            "read back, not redrawn"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        std::fs::write(&path, b"short").unwrap();
        let error = load_or_create(&path).unwrap_err();
        assert!(error.to_string().contains("at least 16"), "{error}");
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
                .map(|_| s.spawn(|| load_or_create(&path).unwrap()))
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
