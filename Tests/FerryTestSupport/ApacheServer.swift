#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// Debian's Apache (apache2, with mod_auth_digest) on a loopback port for the duration of a
/// test: a real third-party server that asks for Digest MD5, its password file made by
/// `htdigest`, its access log recording each request's Authorization. Nil when apache2 or
/// htdigest is missing (`scripts/test` installs both as root).
package final class ApacheServer: @unchecked Sendable {
    package let port: Int
    package let folder: URL
    private var pid: pid_t = 0

    package static let modules = "/usr/lib/apache2/modules"
    package static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/apache2") && FileManager.default.isExecutableFile(atPath: "/usr/bin/htdigest")
            && FileManager.default.fileExists(atPath: "\(modules)/mod_auth_digest.so")
    }

    /// The folder it serves (`www/`): files put there are protected by Digest for `user`.
    package var root: URL { folder.appendingPathComponent("www") }
    package var base: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The access log: `"GET /f HTTP/1.1" 401 -`, then the Authorization sent.
    package var accessLog: String { (try? String(contentsOf: folder.appendingPathComponent("access.log"), encoding: .utf8)) ?? "" }

    /// Writes the configuration and the password file (`htdigest -c`), starts Apache in the
    /// foreground and waits until it accepts connections.
    package init(folder: URL, realm: String, user: String, password: String) async throws {
        guard Self.isInstalled else { throw TestFailure("apache2 is not installed") }
        self.folder = folder
        port = try unusedLoopbackPort()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("www"), withIntermediateDirectories: true)
        chmod(folder.path, 0o755)
        let digest = folder.appendingPathComponent("digest")
        // Without a terminal (setsid), htdigest reads the password twice from standard input.
        let made = try await CommandRunner.run(
            "/usr/bin/setsid", ["/usr/bin/htdigest", "-c", digest.path, realm, user], environment: ["PATH": "/usr/bin:/bin"], input: "\(password)\n\(password)\n",
            timeout: .seconds(20)
        )
        guard made.status == 0 else { throw TestFailure("htdigest failed: \(made)") }
        chmod(digest.path, 0o644)
        // Started as root, Apache's children run as nobody (it refuses to serve as root).
        let user = getuid() == 0 ? "User nobody\nGroup nogroup\n" : ""
        let m = Self.modules
        try """
            ServerRoot "\(folder.path)"
            ServerName 127.0.0.1
            Listen 127.0.0.1:\(port)
            PidFile "\(folder.path)/httpd.pid"
            ErrorLog "\(folder.path)/error.log"
            LogFormat "\\"%r\\" %>s range=%{Range}i if-range=%{If-Range}i %{Authorization}i" auth
            CustomLog "\(folder.path)/access.log" auth
            \(user)LoadModule mpm_event_module \(m)/mod_mpm_event.so
            LoadModule authn_core_module \(m)/mod_authn_core.so
            LoadModule authn_file_module \(m)/mod_authn_file.so
            LoadModule authz_core_module \(m)/mod_authz_core.so
            LoadModule authz_user_module \(m)/mod_authz_user.so
            LoadModule auth_digest_module \(m)/mod_auth_digest.so
            DocumentRoot "\(folder.path)/www"
            <Directory "\(folder.path)/www">
              AuthType Digest
              AuthName "\(realm)"
              AuthDigestProvider file
              AuthUserFile "\(digest.path)"
              Require valid-user
            </Directory>
            """.write(to: folder.appendingPathComponent("httpd.conf"), atomically: true, encoding: .utf8)
        pid = try ChildProcess.spawn(
            "/usr/sbin/apache2", arguments: ["-f", folder.appendingPathComponent("httpd.conf").path, "-DFOREGROUND"],
            output: .appendToFile(folder.appendingPathComponent("stderr.log").path)
        )
        try await eventually("apache2 to listen on \(port)", timeout: .seconds(15)) {
            if !ChildProcess.isAlive(self.pid) {
                throw TestFailure("apache2 exited: \((try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")")
            }
            return ProxyProcess.accepts(self.port)
        }
    }

    /// Stops it (SIGTERM: Apache stops its children, then itself) and waits for it.
    package func stop() async {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        _ = await ChildProcess.wait(pid)
        pid = 0
    }

    deinit {
        if pid > 0 { kill(pid, SIGTERM) }
    }
}
