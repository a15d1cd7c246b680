#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation

/// A password from standard input (`--password-stdin`) or typed twice at the terminal, unseen.
enum PasswordInput {
    static func readStdin() throws -> String {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw ValidationError("No password on standard input.") }
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
