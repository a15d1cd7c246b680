import FerryModel
import Foundation
import GRDB

/// Reading a `transfer` row by position. Every request for records selects ``Columns`` in
/// order (``databaseSelection``), so `init(row:)` reads each column at its index: decoding by
/// name through Codable was a third of the time of listing 10,000 transfers
/// (bench/reports/2026-11-api.md, "Listing 10,000 transfers"). Writing is by hand too
/// (TransferRecord+Columns.swift).
extension TransferRecord {
    package enum Columns: String, CaseIterable, ColumnExpression {
        case id, session, url, state, folder, suggestedName, preferredName, taskDescription, nameHint, fileName
        case durableBytes, totalBytes, validator, sha256, errorCode, errorMessage, attempts, failures, retryAt
        case keepsPartFile, createdAt, updatedAt, completedAt, kind, method, sourcePath, sourceIdentity, formField
        case uploadProtocol, uploadURL, responseStatus, responseHeaders, responseBody, options, startAfter
        case waitReason, waitingSince, waitsForNetwork, segments, mirrors
        case directory, outputName, overwrite, checksum, serverDigest, verifiedBy, priority, queueRank, hidden
        case requestedBy, httpVersion
    }

    package static var databaseSelection: [any SQLSelectable] { Columns.allCases }

    private static let selectColumns = "SELECT " + Columns.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
    private static let selectByID = selectColumns + " FROM transfer WHERE id = ?"

    /// A session's newest transfer of a URL in a state that counts as already asked for
    /// (``TransferJournalKeys/reusableStates``): its id; arguments: session, URL.
    static let selectReusable = "SELECT id FROM transfer WHERE session = ? AND url = ? AND NOT hidden AND state IN ("
        + TransferJournalKeys.reusableStates.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ") ORDER BY id DESC LIMIT 1"

    /// One transfer by id, through a statement SQLite compiles once per connection: preparing
    /// it anew for every read was a tenth of the daemon's time on many small downloads.
    static func fetchOne(_ db: Database, id: Int64) throws -> TransferRecord? {
        try TransferRecord.fetchOne(db.cachedStatement(sql: selectByID), arguments: [id])
    }

    package init(row: Row) throws {
        guard row.count == Columns.allCases.count else {
            throw FerryError(.internalError, "A transfer row has \(row.count) columns, not the \(Columns.allCases.count) selected.")
        }
        var index = 0
        // Concrete column types take GRDB's direct sqlite3_column_* path; dates (text) do not.
        func next<Value: DatabaseValueConvertible & StatementColumnConvertible>() throws -> Value {
            defer { index += 1 }
            return try row.decode(Value.self, atIndex: index)
        }
        func nextIfPresent<Value: DatabaseValueConvertible & StatementColumnConvertible>() throws -> Value? {
            defer { index += 1 }
            return row.hasNull(atIndex: index) ? nil : try row.decode(Value.self, atIndex: index)
        }
        func nextDate() throws -> Date {
            defer { index += 1 }
            return try row.decode(Date.self, atIndex: index)
        }
        func nextDateIfPresent() throws -> Date? {
            defer { index += 1 }
            return row.hasNull(atIndex: index) ? nil : try row.decode(Date.self, atIndex: index)
        }
        func nextEnum<Value: RawRepresentable<String>>(_ column: Columns) throws -> Value? {
            guard let text: String = try nextIfPresent() else { return nil }
            guard let value = Value(rawValue: text) else {
                throw FerryError(.internalError, "The journal has '\(text)' as a transfer's \(column.rawValue).")
            }
            return value
        }
        id = try next()
        session = try next()
        url = try next()
        guard let state: TransferState = try nextEnum(.state) else { throw FerryError(.internalError, "A transfer has no state.") }
        self.state = state
        folder = try next()
        suggestedName = try nextIfPresent()
        preferredName = try nextIfPresent()
        taskDescription = try nextIfPresent()
        nameHint = try nextIfPresent()
        fileName = try nextIfPresent()
        durableBytes = try next()
        totalBytes = try nextIfPresent()
        validator = try nextIfPresent()
        sha256 = try nextIfPresent()
        errorCode = try nextIfPresent()
        errorMessage = try nextIfPresent()
        attempts = try next()
        failures = try next()
        retryAt = try nextDateIfPresent()
        keepsPartFile = try next()
        createdAt = try nextDate()
        updatedAt = try nextDate()
        completedAt = try nextDateIfPresent()
        kind = try nextEnum(.kind) ?? .download
        method = try nextIfPresent()
        sourcePath = try nextIfPresent()
        sourceIdentity = try nextIfPresent()
        formField = try nextIfPresent()
        uploadProtocol = try nextEnum(.uploadProtocol)
        uploadURL = try nextIfPresent()
        responseStatus = try nextIfPresent()
        responseHeaders = try nextIfPresent()
        responseBody = try nextIfPresent()
        options = try nextIfPresent()
        startAfter = try nextDateIfPresent()
        waitReason = try nextIfPresent()
        waitingSince = try nextDateIfPresent()
        waitsForNetwork = try next()
        segments = try nextIfPresent()
        mirrors = try nextIfPresent()
        directory = try nextIfPresent()
        outputName = try nextIfPresent()
        overwrite = try next()
        checksum = try nextIfPresent()
        serverDigest = try nextIfPresent()
        verifiedBy = try nextIfPresent()
        priority = try next()
        queueRank = try nextIfPresent()
        hidden = try next()
        requestedBy = try nextIfPresent()
        httpVersion = try nextIfPresent()
    }
}
