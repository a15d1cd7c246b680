import ArgumentParser
import Testing

@testable import ferry

/// The command tree as ArgumentParser sees it.
@Suite struct CommandTreeTests {
    /// Every command names itself. ArgumentParser walks the whole tree on every run, and derives a
    /// missing name with `String(describing:)` of the type: in this binary each of those costs
    /// a scan of ~10,700 protocol conformance records (perf; see
    /// bench/reports/2026-11-startup-and-resident-size.md, "Protocol conformance lookups").
    @Test func everyCommandHasAnExplicitName() {
        var pending: [any ParsableCommand.Type] = [Ferry.self]
        var seen = 0
        while let command = pending.popLast() {
            seen += 1
            #expect(command.configuration.commandName != nil, "\(command) has no commandName")
            pending += command.configuration.subcommands
        }
        #expect(seen > 20)
    }
}
