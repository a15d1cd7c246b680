#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writing to the terminal: stdout for results, stderr for errors and progress.
enum Terminal {
    /// A result line. A reader that went away (`ferry ls | head -1`) ends the command quietly
    /// with status 0, as `ls | head` does.
    static func print(_ text: String, terminator: String = "\n") {
        guard write(STDOUT_FILENO, text + terminator) else { exit(0) }
    }

    static func error(_ text: String) {
        _ = write(STDERR_FILENO, "ferry: \(text)\n")
    }

    static func progress(_ text: String) {
        _ = write(STDERR_FILENO, text)
    }

    /// Writes all of `text`; false when the reader is gone (EPIPE: SIGPIPE is ignored, as
    /// SwiftNIO ignores it, so a closed pipe is an error here rather than a signal) or the
    /// descriptor fails. `FileHandle.write` traps on such an error instead.
    private static func write(_ descriptor: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    /// True when stderr is a terminal (progress bars redraw in place).
    static var isInteractive: Bool { isatty(STDERR_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb" }

    /// The terminal's columns; `COLUMNS` when there is no terminal; else no limit (a script
    /// reading `ferry ls` gets whole lines).
    static var width: Int {
        var size = winsize()
        for descriptor in [STDOUT_FILENO, STDERR_FILENO] where ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 20 {
            return Int(size.ws_col)
        }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 20 { return columns }
        return 10_000
    }

    /// Runs `handler` on Ctrl-C instead of dying mid-line.
    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}
