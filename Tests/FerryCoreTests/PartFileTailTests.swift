import Testing

@testable import FerryCore

/// How much of a part file a starting daemon journals as durable.
@Suite struct PartFileTailTests {
    @Test func theSameBootTrustsTheWholeFile() {
        #expect(PartFileTail.trusted(fileLength: 150, journaled: 100, total: 400, sameBoot: true) == 150)
        #expect(PartFileTail.trusted(fileLength: 150, journaled: 100, total: nil, sameBoot: true) == 150)
        #expect(PartFileTail.trusted(fileLength: 400, journaled: 100, total: 400, sameBoot: true) == 400)
    }

    @Test func anotherBootTrustsOnlyTheCheckpoint() {
        #expect(PartFileTail.trusted(fileLength: 150, journaled: 100, total: 400, sameBoot: false) == 100)
        #expect(PartFileTail.trusted(fileLength: 150, journaled: 100, total: nil, sameBoot: false) == 100)
    }

    @Test func aFileShorterThanItsCheckpointKeepsWhatItHas() {
        #expect(PartFileTail.trusted(fileLength: 60, journaled: 100, total: 400, sameBoot: false) == 60)
        #expect(PartFileTail.trusted(fileLength: 60, journaled: 100, total: 400, sameBoot: true) == 60)
    }

    @Test func aFileLongerThanPromisedIsNotTrustedFurther() {
        #expect(PartFileTail.trusted(fileLength: 500, journaled: 100, total: 400, sameBoot: true) == 100)
    }
}
