import Crypto
import FerryKit
import Foundation

/// Digests of test data by every ``Checksum/Algorithm``, worked out apart from Ferry's own code.
package enum Digests {
    package static func bytes(_ data: Data, _ algorithm: Checksum.Algorithm) -> Data {
        switch algorithm {
        case .sha256: Data(SHA256.hash(data: data))
        case .sha512: Data(SHA512.hash(data: data))
        case .sha384: Data(SHA384.hash(data: data))
        case .sha1: Data(Insecure.SHA1.hash(data: data))
        case .md5: Data(Insecure.MD5.hash(data: data))
        }
    }

    package static func hex(_ data: Data, _ algorithm: Checksum.Algorithm) -> String {
        bytes(data, algorithm).map { String(format: "%02x", $0) }.joined()
    }

    package static func base64(_ data: Data, _ algorithm: Checksum.Algorithm) -> String {
        bytes(data, algorithm).base64EncodedString()
    }
}
