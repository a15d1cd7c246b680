import Crypto
import FerryModel
import Foundation

/// A file's digest by any ``Checksum/Algorithm``, read from the disk in one pass. SHA-256 comes
/// from the ``FileHasher`` as the file grows; the others (a checksum given as sha-512, sha-1 or
/// md5) cost this one read at the end.
enum FileDigest {
    static func hex(of url: URL, _ algorithm: Checksum.Algorithm) throws(FerryError) -> String {
        switch algorithm {
        case .sha256: try hex(of: url, SHA256())
        case .sha512: try hex(of: url, SHA512())
        case .sha384: try hex(of: url, SHA384())
        case .sha1: try hex(of: url, Insecure.SHA1())
        case .md5: try hex(of: url, Insecure.MD5())
        }
    }

    private static func hex<Hash: HashFunction>(of url: URL, _ hash: Hash) throws(FerryError) -> String {
        var hash = hash
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                hash.update(data: chunk)
            }
        } catch {
            throw FerryError(.fileSystem, "Could not read \(url.path) to check its digest: \(error.localizedDescription)")
        }
        return hash.finalize().hexText
    }
}
