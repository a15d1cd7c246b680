import Testing

@testable import FerryCore

/// What recovery does with a transfer whose name was reserved but whose completion was not
/// journaled: every combination of what the disk shows.
@Suite struct InterruptedMoveTests {
    typealias Facts = InterruptedMove.Facts

    @Test(arguments: [
        // part, target, same file, target size → decision
        (true, true, true, Int64?(100), InterruptedMove.Decision.unlinkPart),
        (true, false, false, nil, .link),
        (false, true, false, 100, .placed),
        (false, true, false, 99, .runAgain(keepsBytes: false)),
        (true, true, false, 100, .runAgain(keepsBytes: true)),
        (false, false, false, nil, .runAgain(keepsBytes: false)),
    ])
    func decides(part: Bool, target: Bool, same: Bool, size: Int64?, expected: InterruptedMove.Decision) {
        let facts = Facts(partExists: part, targetExists: target, sameFile: same, targetSize: size, expectedSize: 100)
        #expect(InterruptedMove.decide(facts) == expected)
    }

    /// Without a journaled size, a file found at the name proves nothing: the transfer runs again.
    @Test func aFileOfUnknownSizeIsNotTaken() {
        let facts = Facts(partExists: false, targetExists: true, sameFile: false, targetSize: 100, expectedSize: nil)
        #expect(InterruptedMove.decide(facts) == .runAgain(keepsBytes: false))
    }
}
