import Crypto
import CryptoExtras
import Foundation

/// An account's password as the journal keeps it: scrypt with a random salt
/// (`scrypt$N$r$p$salt$key`, base64), never the password itself.
enum AccountPassword {
    /// 2^15 rounds of 8-block scrypt: 32 MiB and about 0.1 s a check, slow enough that a stolen
    /// journal does not give the passwords up cheaply, quick enough for a phone's login.
    static let rounds = 1 << 15, blockSize = 8, parallelism = 1

    static func hash(_ password: String) throws -> String {
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })
        let key = try derive(password, salt: salt, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        return ["scrypt", "\(rounds)", "\(blockSize)", "\(parallelism)", salt.base64EncodedString(), key.base64EncodedString()].joined(separator: "$")
    }

    /// Whether `password` is the one `stored` was made from (compared in constant time).
    static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let rounds = Int(parts[1]), let blockSize = Int(parts[2]),
            let parallelism = Int(parts[3]), let salt = Data(base64Encoded: parts[4]), let expected = Data(base64Encoded: parts[5]),
            let key = try? derive(password, salt: salt, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        else { return false }
        return key.count == expected.count && zip(key, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func derive(_ password: String, salt: Data, rounds: Int, blockSize: Int, parallelism: Int) throws -> Data {
        let key = try KDF.Scrypt.deriveKey(
            from: Data(password.utf8), salt: salt, outputByteCount: 32, rounds: rounds, blockSize: blockSize, parallelism: parallelism
        )
        return key.withUnsafeBytes { Data($0) }
    }
}
