#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writing to the terminal: stdout for results, stderr for errors and progress.
enum Terminal {
    static func print(_ text: String, terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data("ferry: \(text)\n".utf8))
    }

    static func progress(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
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
