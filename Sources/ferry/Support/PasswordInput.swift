#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import Synchronization

/// A password from standard input (`--password-stdin`) or typed twice at the terminal, unseen.
enum PasswordInput {
    /// Standard input's first line; read once (a command may ask for its options more than once).
    static func readStdin() throws -> String {
        let data = standardInput.withLock { data in
            if data == nil { data = FileHandle.standardInput.readDataToEndOfFile() }
            return data!
        }
        return try firstLine(of: data, from: "standard input")
    }

    private static let standardInput = Mutex<Data?>(nil)

    /// The first line of a file (a passphrase kept in one).
    static func readFile(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("Cannot read \(path).") }
        return try firstLine(of: data, from: path)
    }

    private static func firstLine(of data: Data, from source: String) throws -> String {
        let text = String(decoding: data, as: UTF8.self)
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw ValidationError("No password in \(source): its first line is empty.") }
        return password
    }

    static func prompt(_ label: String) throws -> String {
        guard isatty(STDIN_FILENO) == 1 else { throw ValidationError("No terminal to ask for the password: use --password-stdin.") }
        let first = readHidden(label)
        let second = readHidden("Again: ")
        guard first == second else { throw ValidationError("The passwords differ.") }
        return first
    }

    /// A line from the terminal with echo off.
    static func readHidden(_ prompt: String) -> String {
        Terminal.progress(prompt)
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            Terminal.progress("\n")
        }
        return readLine(strippingNewline: true) ?? ""
    }
}
