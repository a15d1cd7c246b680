#if canImport(Glibc)
import Glibc
#endif
import FerryCore
import FerryKit
import Foundation

extension Doctor {
    /// The daemon's listeners when it runs; else each configured address tried as a start
    /// would, and a taken one named with the program that holds it.
    func checkListeners() -> DoctorCheck {
        if let listening {
            return DoctorCheck(
                name: "listeners", status: .ok, summary: "listening: " + listening.map { "\($0.name) \($0.url)" }.joined(separator: ", ")
            )
        }
        var wanted: [(name: String, host: String, port: Int, required: Bool)] = []
        let environment = ProcessInfo.processInfo.environment
        if let named = environment["FERRY_PORT"].flatMap(Int.init) {
            wanted.append(("API", "127.0.0.1", named, true))
        } else if let url = ServiceAddress.read(paths: paths).flatMap(URL.init(string:)), let host = url.host, let port = url.port {
            wanted.append(("API (the service's socket)", host, port, false))
        } else {
            wanted.append(("API", "127.0.0.1", DaemonConfiguration.defaultPort, false))
        }
        let files = ListenerSettingFiles(paths: paths)
        var unreadable: [String] = []
        do {
            if let sync = try files.sync(), let listener = try? SyncListener(sync) { wanted.append(("sync API", listener.host, listener.port, true)) }
        } catch { unreadable.append(error.message) }
        do {
            if let remote = try files.remote() {
                for text in remote.listen { if let address = try? RemoteListeners.Address(text) { wanted.append(("web app beyond loopback", address.host, address.port, true)) } }
            }
        } catch { unreadable.append(error.message) }
        if let port = files.aria2Port() { wanted.append(("aria2 RPC", "127.0.0.1", port, true)) }
        var details: [String] = unreadable
        var status = unreadable.isEmpty ? DoctorCheck.Status.ok : .problem
        for listener in wanted where listener.port != 0 {
            let what = listener.host.contains(":") ? "[\(listener.host)]:\(listener.port)" : "\(listener.host):\(listener.port)"
            do {
                _ = try ListeningSocket.bind(host: listener.host, port: listener.port)
                details.append("\(listener.name) \(what): free")
            } catch {
                let holder = PortHolder.find(port: listener.port).map { " by \($0)" } ?? " by a program this user cannot see"
                details.append("\(listener.name) \(what): taken\(holder)" + (listener.required ? "" : "; Ferry takes a free port instead"))
                status = max(status, listener.required ? .problem : .warning)
            }
        }
        return DoctorCheck(
            name: "listeners", status: status,
            summary: status == .ok ? "Ferry is not running; every port it would listen on is free" : "a port Ferry listens on is taken",
            details: details,
            advice: status == .ok ? nil : "Stop the program that holds it, or give Ferry another port (`ferry serve --port`, `ferry aria2 enable --port`, `ferry remote enable --listen`, `ferry sync enable`)."
        )
    }

    /// The state folder (0700) and the secrets in it (0600: the API token, the aria2 secret, the
    /// extension's pairing, the TLS keys, the journal with its accounts): `fix` sets the modes.
    func checkPermissions(fix: Bool) -> DoctorCheck {
        var files: [(path: String, mode: mode_t)] = [(paths.state.path, 0o700)]
        let tls = paths.state.appendingPathComponent("tls")
        let secrets = [paths.token, paths.aria2Secret, paths.extensionPairing, paths.journal].map(\.path)
            + [paths.journal.path + "-wal", paths.journal.path + "-shm"]
            + ((try? FileManager.default.contentsOfDirectory(atPath: tls.path)) ?? []).filter { $0.hasSuffix("key.pem") }.map { tls.appendingPathComponent($0).path }
        files += secrets.map { ($0, 0o600) }
        var details: [String] = [], mended: [String] = [], left = 0
        for (path, mode) in files {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            if info.st_uid != getuid() {
                details.append("\(path) belongs to user \(info.st_uid), Ferry runs as \(getuid())")
                left += 1
                continue
            }
            let open = info.st_mode & 0o077
            guard open != 0 else { continue }
            let now = String(info.st_mode & 0o777, radix: 8)
            if fix, chmod(path, mode) == 0 {
                mended.append("\(path): mode \(now) → \(String(mode, radix: 8))")
            } else {
                details.append("\(path) has mode \(now): \(open & 0o044 != 0 ? "readable" : "usable") by other users")
                left += 1
            }
        }
        if left == 0 {
            return DoctorCheck(
                name: "permissions", status: .ok,
                summary: mended.isEmpty ? "the state folder and its secrets are this user's alone" : "the state folder and its secrets are this user's alone again",
                mended: mended
            )
        }
        return DoctorCheck(
            name: "permissions", status: .problem, summary: "\(left) of Ferry's secrets can be read by others, or are not this user's", details: details,
            advice: fix ? "Give them to this user (`chown`) and run `ferry doctor --fix` again." : "Mending (`ferry doctor --fix`, or Mend in Settings › Health) sets the modes (0700 for the folder, 0600 for secrets).",
            mended: mended
        )
    }

    /// Free space where unfinished downloads go, against what they still need.
    func checkDisk(_ transfers: [TransferRecord]) -> DoctorCheck {
        let unfinished: Set<TransferState> = [.queued, .running, .waiting, .paused]
        var needs: [String: Int64] = [library.root.path: 0]
        for record in transfers where record.kind == .download && unfinished.contains(record.state) {
            let folder = record.directory ?? library.root.path
            needs[folder, default: 0] += max(0, (record.totalBytes ?? 0) - record.durableBytes)
        }
        // One line per file system, not per folder.
        var byDevice: [UInt64: (folder: String, free: Int64, needed: Int64)] = [:]
        for (folder, needed) in needs {
            var existing = URL(fileURLWithPath: folder)
            while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" { existing.deleteLastPathComponent() }
            var info = statvfs(), place = stat()
            guard statvfs(existing.path, &info) == 0, stat(existing.path, &place) == 0 else { continue }
            let free = Int64(info.f_bavail) * Int64(info.f_frsize)
            let device = UInt64(place.st_dev)
            let before = byDevice[device]
            byDevice[device] = (before?.folder ?? folder, free, (before?.needed ?? 0) + needed)
        }
        var status = DoctorCheck.Status.ok
        var details: [String] = []
        for (_, place) in byDevice.sorted(by: { $0.value.folder < $1.value.folder }) {
            var line = "\(place.folder): \(ByteText.format(place.free)) free"
            if place.needed > 0 { line += ", \(ByteText.format(place.needed)) still to download" }
            if place.needed > place.free {
                status = .problem
                line += ": not enough"
            } else if place.free < 1 << 30 {
                status = max(status, .warning)
                line += ": less than 1 GiB left"
            }
            details.append(line)
        }
        return DoctorCheck(
            name: "disk", status: status,
            summary: status == .ok ? "enough room where downloads go" : status == .problem ? "not enough room for the unfinished downloads" : "little room left where downloads go",
            details: details,
            advice: status == .ok ? nil : "Free some space, or move downloads elsewhere (`ferry get -o DIR`); a download that finds the disk full waits, its bytes kept."
        )
    }
}

/// Which program listens on a TCP port: `/proc/net/tcp{,6}` gives the socket's inode, a
/// process's `/proc/PID/fd` the socket.
enum PortHolder {
    static func find(port: Int) -> String? {
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = readAll(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // local_address is HEXADDR:HEXPORT; state 0A is LISTEN; the inode is field 9.
                guard fields.count > 9, fields[3] == "0A", let local = fields[1].split(separator: ":").last,
                    Int(local, radix: 16) == port
                else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        guard !inodes.isEmpty else { return nil }
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(pid) != nil {
            let fds = "/proc/\(pid)/fd"
            for fd in entries(fds) {
                guard let target = link("\(fds)/\(fd)"), target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast())) else { continue }
                let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                return "\(name ?? "a program") (pid \(pid))"
            }
        }
        return nil
    }

    /// A folder's names, as many as can be read: a busy process's descriptors come and go while
    /// they are listed (a listing that fails on one would skip the whole process).
    static func entries(_ path: String) -> [String] {
        guard let folder = opendir(path) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// A procfs file whole: it reports a size of 0, and a busy machine's socket table is long.
    static func readAll(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            data += chunk.prefix(count)
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
