import ArgumentParser
import FerryKit
import Foundation

/// `ferry session cookies`: a session's cookie jar.
struct SessionCookiesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cookies",
        abstract: "List, import, export or clear a session's cookies (values shown as <redacted>).",
        discussion: """
            Each session keeps the cookies servers set (RFC 6265: domain, path, expiry, Secure, \
            SameSite), kept in the journal and sent with the session's later requests, along \
            redirects too: log in once, then download. Import a browser's cookies from a \
            cookies.txt file (the Netscape format that browser extensions, curl, wget and aria2c \
            write), or give one with a download: `ferry get --load-cookies cookies.txt URL`.
              ferry session cookies ls cli
              ferry session cookies import cli ~/Downloads/cookies.txt
              ferry session cookies export cli jar.txt      (values included: keep it private)
              ferry session cookies clear cli
              ferry session cookies login cli https://site/login --form user=ann --password-field password
            """,
        subcommands: [List.self, Import.self, Export.self, Clear.self, LogIn.self],
        defaultSubcommand: List.self
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List a session's cookies, values redacted.")

        @Argument(help: "The session.") var session: String = "cli"
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let list = try await CLIConnection.connect().cookies(session: session)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(list) }
            guard !list.cookies.isEmpty else { return Terminal.print("Session \(session) has no cookies.") }
            for cookie in list.cookies {
                let scope = (cookie.hostOnly ? "" : ".") + cookie.domain + cookie.path
                let expires = cookie.expires.map { "until \(Format.clock($0))" } ?? "session cookie"
                let flags = [cookie.secure ? "Secure" : nil, cookie.httpOnly ? "HttpOnly" : nil, cookie.sameSite.map { "SameSite=\($0.rawValue)" }]
                    .compactMap { $0 }.joined(separator: " ")
                Terminal.print("\(cookie.name)=<redacted>  \(scope)  \(expires)\(flags.isEmpty ? "" : "  \(flags)")")
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import", abstract: "Add a cookies.txt file's cookies to a session's jar.")

        @Argument(help: "The session.") var session: String
        @Argument(help: "A cookies.txt file (Netscape format; '-' for standard input).") var file: String
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let text = try CookiesInput.read(file)
            let change = try await CLIConnection.connect().importCookies(text, session: session)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(change) }
            Terminal.print("Imported \(change.imported) cookies into session \(session) (\(change.cookies.count) in its jar).")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "Write a session's cookies to a cookies.txt file (values included; made readable by you only)."
        )

        @Argument(help: "The session.") var session: String
        @Argument(help: "The file to write ('-' for standard output).") var file: String

        func run() async throws {
            let text = try await CLIConnection.connect().exportCookies(session: session)
            if file == "-" { return Terminal.print(text, terminator: "") }
            let path = TransferOptionFlags.absolutePath(file)
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw ValidationError("Cannot write \(path).")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            Terminal.print("Wrote session \(session)'s cookies to \(path).")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Forget every cookie of a session.")

        @Argument(help: "The session.") var session: String
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let change = try await CLIConnection.connect().clearCookies(session: session)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(change) }
            Terminal.print("Cleared \(change.cleared) cookies of session \(session).")
        }
    }

    struct LogIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "Log a session in to a site: post its login form, keep the cookies it sets.",
            discussion: """
                The daemon POSTs the form (application/x-www-form-urlencoded) to the URL and follows \
                the redirects (as a browser: with GET after a 302 or 303), keeping every cookie the \
                answers set in the session's jar; then the session's downloads send them. The \
                password is read from standard input or the terminal, sent, and never kept.
                  echo "$PASSWORD" | ferry session cookies login cli https://site/login \\
                      --form user=ann --password-field password --password-stdin
                """
        )

        @Argument(help: "The session.") var session: String
        @Argument(help: "The login form's URL (where it is posted).") var url: String
        @Option(name: .long, help: ArgumentHelp("A form field, name=value (repeatable).", valueName: "name=value")) var form: [String] = []
        @Option(name: .long, help: ArgumentHelp("The form field that takes the password (read, not given on the command line).", valueName: "name"))
        var passwordField: String?
        @Flag(name: .long, help: "Read the password from standard input (its first line).") var passwordStdin = false
        @OptionGroup var output: OutputOptions

        func validate() throws {
            for field in form where !field.contains("=") { throw ValidationError("--form takes name=value ('\(field.prefix(40))' has no '=').") }
            if passwordStdin, passwordField == nil { throw ValidationError("--password-stdin goes with --password-field NAME.") }
        }

        func run() async throws {
            var fields = form.map { field in
                let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return SessionLoginRequest.FormField(name: String(parts[0]), value: String(parts[1]))
            }
            if let passwordField {
                let password = passwordStdin ? try PasswordInput.readStdin() : PasswordInput.readHidden("Password: ")
                fields.append(.init(name: passwordField, value: password))
            }
            let login = try await CLIConnection.connect().logIn(session: session, SessionLoginRequest(url: url, form: fields))
            if output.json { return try FerryJSON.encoder(pretty: true).printing(login) }
            let ok = (200...299).contains(login.status)
            Terminal.print("\(ok ? "Logged in" : "The site answered \(login.status)") at \(login.url); session \(session) holds \(login.cookies.count) cookies.")
            if !ok { throw ExitCode(1) }
        }
    }
}

/// A cookies.txt file read and checked on this side, so a malformed line is named before
/// anything is sent.
enum CookiesInput {
    static func read(_ file: String) throws -> String {
        let data: Data
        if file == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: TransferOptionFlags.absolutePath(file)) else {
                throw ValidationError("Cannot read the cookies file \(file).")
            }
            data = contents
        }
        guard data.count <= 4 << 20 else { throw ValidationError("\(file) is over 4 MiB: not a cookies file.") }
        let text = String(decoding: data, as: UTF8.self)
        do {
            _ = try CookiesFile.parse(text)
        } catch {
            throw ValidationError("\(file): \(error.message)")
        }
        return text
    }
}
