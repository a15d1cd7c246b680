import Crypto
import CryptoExtras
import FerryCore
import FerryKit
import Foundation
import GRDB

/// What a backup keeps apart from its snapshot, sealed with the user's passphrase (`ferry backup
/// --with-secrets`): the state folder's secrets (the API token, aria2's secret, the extension's
/// pairing, Ferry's CA and certificate keys) and the journal's (private feeds' passwords,
/// sensitive headers, proxy credentials, key passphrases and `--user` passwords in options,
/// sessions' cookies, the credential store's logins). The snapshot itself holds none of them.
struct BackupSecrets: Codable, Sendable, Equatable {
    /// State-folder files by their path in it (`token`, `tls/ca-key.pem`).
    var files: [String: Data] = [:]
    var feeds: [FeedLogin] = []
    /// Options as they were, where the snapshot's lost a header or a proxy's credentials.
    var transferOptions: [Int64: String] = [:]
    var sessionOptions: [String: String] = [:]
    /// Sessions' cookie jars (JSON, as the journal keeps them).
    var sessionCookies: [String: String]? = nil
    /// The credential store's rows (`ferry credentials`); absent from backups made before it.
    var credentials: [HostLogin]?

    struct HostLogin: Codable, Sendable, Equatable {
        var host: String
        var user: String
        var password: String
        var addedAt: Double
    }

    struct FeedLogin: Codable, Sendable, Equatable {
        var podcastId: Int64
        var username: String?
        var password: String?
    }

    /// The state folder's secret files.
    static let fileNames = ["token", "aria2-secret", "extension.json"]

    /// Reads the secret files and takes the secrets out of the snapshot `db` (a copy).
    static func extract(from db: Database, state: URL) throws -> BackupSecrets {
        var secrets = BackupSecrets()
        for name in fileNames {
            if let data = FileManager.default.contents(atPath: state.appendingPathComponent(name).path) { secrets.files[name] = data }
        }
        let tls = state.appendingPathComponent("tls")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tls.path)) ?? [] {
            if let data = FileManager.default.contents(atPath: tls.appendingPathComponent(name).path) { secrets.files["tls/\(name)"] = data }
        }
        if try db.tableExists("podcast") {
            for row in try Row.fetchAll(db, sql: "SELECT id, username, password FROM podcast WHERE username IS NOT NULL OR password IS NOT NULL") {
                secrets.feeds.append(FeedLogin(podcastId: row["id"], username: row["username"], password: row["password"]))
            }
            try db.execute(sql: "UPDATE podcast SET username = NULL, password = NULL")
        }
        if try db.tableExists("credential") {
            let logins = try Row.fetchAll(db, sql: "SELECT host, user, password, addedAt FROM credential").map { row in
                HostLogin(host: row["host"], user: row["user"], password: row["password"], addedAt: row["addedAt"])
            }
            if !logins.isEmpty { secrets.credentials = logins }
            try db.execute(sql: "DELETE FROM credential")
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, options FROM transfer WHERE options IS NOT NULL") {
            let id: Int64 = row["id"], text: String = row["options"]
            guard let stripped = strip(text) else { continue }
            secrets.transferOptions[id] = text
            try db.execute(sql: "UPDATE transfer SET options = ? WHERE id = ?", arguments: [stripped, id])
        }
        for row in try Row.fetchAll(db, sql: "SELECT name, options FROM session WHERE options IS NOT NULL") {
            let name: String = row["name"], text: String = row["options"]
            guard let stripped = strip(text) else { continue }
            secrets.sessionOptions[name] = text
            try db.execute(sql: "UPDATE session SET options = ? WHERE name = ?", arguments: [stripped, name])
        }
        if try db.columns(in: "session").contains(where: { $0.name == "cookies" }) {
            for row in try Row.fetchAll(db, sql: "SELECT name, cookies FROM session WHERE cookies IS NOT NULL") {
                secrets.sessionCookies = (secrets.sessionCookies ?? [:]).merging([row["name"]: row["cookies"]]) { _, new in new }
            }
            try db.execute(sql: "UPDATE session SET cookies = NULL")
        }
        return secrets
    }

    /// Options without sensitive headers, a proxy's credentials, a key's passphrase or a user's
    /// password; nil when there were none.
    static func strip(_ text: String) -> String? {
        guard var options = try? FerryJSON.decoder().decode(TransferOptions.self, from: Data(text.utf8)) else { return nil }
        let before = options
        options.headers = options.headers?.filter { !TransferOptions.isSensitive(header: $0.key) }
        if options.headers?.isEmpty == true { options.headers = nil }
        if let proxy = options.proxy, URL(string: proxy)?.user != nil { options.proxy = nil }
        options.clientKeyPassphrase = nil
        options.password = nil
        guard options != before, let data = try? FerryJSON.encoder().encode(options) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Puts the journal's secrets back into a restored journal, and the files into the state folder.
    func apply(to db: Database, state: URL) throws {
        for feed in feeds {
            try db.execute(sql: "UPDATE podcast SET username = ?, password = ? WHERE id = ?", arguments: [feed.username, feed.password, feed.podcastId])
        }
        for login in credentials ?? [] {
            try db.execute(
                sql: "INSERT OR REPLACE INTO credential (host, user, password, addedAt) VALUES (?, ?, ?, ?)",
                arguments: [login.host, login.user, login.password, login.addedAt]
            )
        }
        for (id, options) in transferOptions { try db.execute(sql: "UPDATE transfer SET options = ? WHERE id = ?", arguments: [options, id]) }
        for (name, options) in sessionOptions { try db.execute(sql: "UPDATE session SET options = ? WHERE name = ?", arguments: [options, name]) }
        for (name, cookies) in sessionCookies ?? [:] { try db.execute(sql: "UPDATE session SET cookies = ? WHERE name = ?", arguments: [cookies, name]) }
        for (name, data) in files {
            // Only the names a backup writes: a crafted backup cannot place a file elsewhere.
            guard Self.fileNames.contains(name) || (name.hasPrefix("tls/") && !name.dropFirst(4).contains("/") && !name.hasPrefix("tls/.")) else { continue }
            let url = state.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try data.write(to: url, options: .atomic)
            _ = chmod(url.path, name.hasSuffix(".pem") && !name.contains("key") ? 0o644 : 0o600)
        }
    }

    var isEmpty: Bool { self == BackupSecrets() }
}

/// The secrets sealed: scrypt turns the passphrase into a key, AES-GCM seals and authenticates.
struct SealedSecrets: Codable, Sendable {
    var kdf = "scrypt"
    var rounds: Int
    var blockSize: Int
    var parallelism: Int
    var salt: Data
    /// AES-GCM's nonce, ciphertext and tag.
    var box: Data

    static func seal(_ secrets: BackupSecrets, passphrase: String, rounds: Int = 1 << 15) throws -> SealedSecrets {
        let salt = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let key = try KDF.Scrypt.deriveKey(from: Data(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: rounds, blockSize: 8, parallelism: 1)
        let sealed = try AES.GCM.seal(try JSONEncoder().encode(secrets), using: key)
        guard let combined = sealed.combined else { throw FerryError(.internalError, "Could not seal the backup's secrets.") }
        return SealedSecrets(rounds: rounds, blockSize: 8, parallelism: 1, salt: salt, box: combined)
    }

    /// - Throws: `unauthorized` for a passphrase that does not open them.
    func open(passphrase: String) throws -> BackupSecrets {
        guard kdf == "scrypt", rounds >= 1 << 10, rounds <= 1 << 22, rounds.nonzeroBitCount == 1, (1...32).contains(blockSize), (1...16).contains(parallelism) else {
            throw FerryError(.invalidRequest, "The backup's secrets are sealed in a way this Ferry does not know.")
        }
        let key = try KDF.Scrypt.deriveKey(from: Data(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        let plain: Data
        do {
            plain = try AES.GCM.open(try AES.GCM.SealedBox(combined: box), using: key)
        } catch {
            throw FerryError(.unauthorized, "That passphrase does not open this backup's secrets; nothing was restored.")
        }
        return try JSONDecoder().decode(BackupSecrets.self, from: plain)
    }
}
