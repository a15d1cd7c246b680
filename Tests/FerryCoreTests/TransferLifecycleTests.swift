import FerryKit
@testable import FerryCore
import Testing

@Suite struct TransferLifecycleTests {
    typealias Command = TransferLifecycle.Command
    typealias Effect = TransferLifecycle.Effect

    enum Expected: Equatable, Sendable {
        case to(TransferState, [Effect])
        case unchanged
        case invalid
    }

    static let commands: [Command] = Command.allCases

    /// The whole table, written out: every state × every command.
    static let table: [TransferState: [Command: Expected]] = [
        .queued: [
            .start: .to(.running, []),
            .pause: .to(.paused, []),
            .resume: .unchanged,
            .cancel: .to(.cancelled, [.deletePartFile]),
            .wait: .invalid,
            .fail: .invalid,
            .complete: .invalid,
            .retry: .invalid,
            .interrupt: .invalid,
            .reopen: .unchanged,
        ],
        .running: [
            .start: .invalid,
            .pause: .to(.paused, [.stopWorker, .schedule]),
            .resume: .unchanged,
            .cancel: .to(.cancelled, [.stopWorker, .deletePartFile, .schedule]),
            .wait: .to(.waiting, [.schedule]),
            .fail: .to(.failed, [.schedule]),
            .complete: .to(.completed, [.schedule]),
            .retry: .invalid,
            .interrupt: .to(.queued, [.schedule]),
            .reopen: .unchanged,
        ],
        .paused: [
            .start: .invalid,
            .pause: .unchanged,
            .resume: .to(.queued, [.schedule]),
            .cancel: .to(.cancelled, [.deletePartFile]),
            .wait: .invalid,
            .fail: .invalid,
            .complete: .invalid,
            .retry: .invalid,
            .interrupt: .invalid,
            .reopen: .to(.queued, [.schedule]),
        ],
        .waiting: [
            .start: .invalid,
            .pause: .to(.paused, [.stopWorker, .schedule]),
            .resume: .to(.queued, [.stopWorker, .schedule]),
            .cancel: .to(.cancelled, [.stopWorker, .deletePartFile, .schedule]),
            .wait: .invalid,
            .fail: .to(.failed, [.schedule]),
            .complete: .invalid,
            .retry: .to(.queued, [.stopWorker, .schedule]),
            .interrupt: .invalid,
            .reopen: .unchanged,
        ],
        .completed: [
            .start: .invalid, .pause: .invalid, .resume: .invalid, .cancel: .invalid,
            .wait: .invalid, .fail: .invalid, .complete: .invalid, .retry: .invalid, .interrupt: .invalid,
            .reopen: .unchanged,
        ],
        .failed: [
            .start: .invalid,
            .pause: .invalid,
            .resume: .to(.queued, [.schedule]),
            .cancel: .to(.cancelled, [.deletePartFile]),
            .wait: .invalid,
            .fail: .invalid,
            .complete: .invalid,
            .retry: .invalid,
            .interrupt: .invalid,
            .reopen: .to(.queued, [.schedule]),
        ],
        .cancelled: [
            .start: .invalid, .pause: .invalid, .resume: .invalid, .cancel: .unchanged,
            .wait: .invalid, .fail: .invalid, .complete: .invalid, .retry: .invalid, .interrupt: .invalid,
            .reopen: .to(.queued, [.schedule]),
        ],
    ]

    static let verbs: [Command: String] = [
        .start: "start", .pause: "be paused", .resume: "be resumed", .cancel: "be cancelled",
        .wait: "wait", .fail: "fail", .complete: "complete", .retry: "retry", .interrupt: "be interrupted",
        .reopen: "be reopened",
    ]

    static let finishingMessage = "The transfer is being moved into the library; it is about to complete."

    func check(_ state: TransferState, _ command: Command, finishing: Bool, expected: Expected) {
        let result: Result<TransferLifecycle.Transition, FerryError>
        do {
            result = .success(try TransferLifecycle.transition(from: state, on: command, finishing: finishing))
        } catch {
            result = .failure(error)
        }
        switch (expected, result) {
        case (.to(let next, let effects), .success(let transition)):
            #expect(transition.state == next)
            #expect(transition.effects == effects)
            #expect(transition.changed)
        case (.unchanged, .success(let transition)):
            #expect(transition.state == state)
            #expect(transition.effects.isEmpty)
            #expect(!transition.changed)
        case (.invalid, .failure(let error)):
            #expect(error.code == .invalidState)
            let message = finishing && state == .running && [.pause, .cancel].contains(command)
                ? Self.finishingMessage
                : "The transfer is \(state.rawValue); it cannot \(Self.verbs[command]!)."
            #expect(error.message == message)
        default:
            Issue.record("\(state) × \(command) (finishing: \(finishing)): expected \(expected), got \(result)")
        }
    }

    @Test func tableCoversEveryStateAndCommand() {
        #expect(Set(Self.table.keys) == Set(TransferState.allCases))
        #expect(TransferState.allCases.count == 7)
        for state in TransferState.allCases {
            #expect(Set(Self.table[state]!.keys) == Set(Self.commands), "\(state)")
        }
    }

    @Test(arguments: TransferState.allCases, commands)
    func transition(_ state: TransferState, _ command: Command) {
        check(state, command, finishing: false, expected: Self.table[state]![command]!)
    }

    @Test func finishingDefaultsToFalse() throws {
        let transition = try TransferLifecycle.transition(from: .running, on: .pause)
        #expect(transition.state == .paused)
    }

    /// While the file is moved into the library only the worker's own report may follow: pause
    /// and cancel of a running transfer are refused; everything else is as in the table.
    @Test(arguments: TransferState.allCases, commands)
    func transitionWhileFinishing(_ state: TransferState, _ command: Command) {
        let refused = state == .running && (command == .pause || command == .cancel)
        check(state, command, finishing: true, expected: refused ? .invalid : Self.table[state]![command]!)
    }

    @Test(arguments: [Command.pause, .cancel])
    func finishingRefusalMessage(_ command: Command) {
        do {
            _ = try TransferLifecycle.transition(from: .running, on: command, finishing: true)
            Issue.record("\(command) was allowed while finishing")
        } catch {
            #expect(error == FerryError(.invalidState, Self.finishingMessage))
        }
    }

    /// A late worker report (retry, fail, complete) never undoes a person's pause or cancel.
    @Test(arguments: [TransferState.paused, .cancelled, .queued, .completed, .failed], [Command.wait, .fail, .complete])
    func lateWorkerReportsAreRefused(_ state: TransferState, _ command: Command) {
        #expect(throws: FerryError.self) {
            try TransferLifecycle.transition(from: state, on: command)
        }
    }

    @Test func commandRawValues() {
        #expect(
            Self.commands.map(\.rawValue)
                == ["start", "pause", "resume", "cancel", "wait", "fail", "complete", "retry", "interrupt", "reopen"]
        )
    }
}
