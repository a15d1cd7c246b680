import FerryCore
import FerryKit
import Foundation
import PostgresNIO

/// A transfer's row in PostgreSQL: the same columns as the SQLite journal's, in the order of
/// ``TransferRecord/Columns``, with PostgreSQL's types (bigint, boolean, timestamptz, text).
extension TransferRecord {
    /// Every column but `id`, quoted (the names are camelCase).
    static let postgresColumns = Columns.allCases.dropFirst().map { "\"\($0.rawValue)\"" }
    /// Every column, then the lease's holder (``TransferRecord/member``).
    private static let selected = Columns.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ") + ", \"owner\""
    static let postgresSelect = "SELECT \(selected) FROM transfer"
    /// ``postgresSelect`` and the lease's fence (``fence(of:)``).
    static let postgresSelectWithFence = "SELECT \(selected), fence FROM transfer"

    /// The fence of a row selected by ``postgresSelectWithFence``.
    static func fence(of row: PostgresRow) throws -> Int64 {
        try row.makeRandomAccess()[Columns.allCases.count + 1].decode(Int64.self)
    }
    static let postgresUpdate =
        "UPDATE transfer SET \(postgresColumns.enumerated().map { "\($1) = $\($0 + 1)" }.joined(separator: ", ")) WHERE id = $\(postgresColumns.count + 1)"

    /// The values of ``postgresColumns``, in order.
    var postgresBindings: PostgresBindings {
        var binds = PostgresBindings(capacity: Self.postgresColumns.count + 1)
        appendPostgresBindings(to: &binds)
        return binds
    }

    /// Appends the values of ``postgresColumns``, in order (many rows to one statement).
    func appendPostgresBindings(to binds: inout PostgresBindings) {
        func add<Value: PostgresDynamicTypeEncodable>(_ value: Value?) { binds.append(value) }
        func add(_ value: Int?) { add(value.map(Int64.init)) }
        add(session); add(url); add(state.rawValue); add(folder); add(suggestedName); add(preferredName); add(taskDescription)
        add(nameHint); add(fileName); add(durableBytes); add(totalBytes); add(validator); add(sha256); add(errorCode)
        add(errorMessage); add(attempts); add(failures); add(retryAt); add(keepsPartFile); add(createdAt); add(updatedAt)
        add(completedAt); add(kind.rawValue); add(method); add(sourcePath); add(sourceIdentity); add(formField)
        add(uploadProtocol?.rawValue); add(uploadURL); add(responseStatus); add(responseHeaders); add(responseBody); add(options)
        add(startAfter); add(waitReason); add(waitingSince); add(waitsForNetwork); add(segments); add(mirrors); add(directory)
        add(outputName); add(overwrite); add(checksum); add(serverDigest); add(verifiedBy); add(priority); add(queueRank); add(hidden)
        add(requestedBy); add(httpVersion)
    }

    /// A row selected by ``postgresSelect``.
    init(postgres row: PostgresRow) throws {
        let cells = row.makeRandomAccess()
        guard cells.count >= Columns.allCases.count + 1 else {
            throw FerryError(.internalError, "A transfer row has \(cells.count) columns, not the \(Columns.allCases.count + 1) selected.")
        }
        var index = 0
        func next<Value: PostgresDecodable>(_: Value.Type = Value.self) throws -> Value {
            defer { index += 1 }
            return try cells[index].decode(Value.self)
        }
        func int() throws -> Int { Int(try next(Int64.self)) }
        func intIfPresent() throws -> Int? { try next(Int64?.self).map(Int.init) }
        func enumeration<Value: RawRepresentable<String>>(_ column: Columns) throws -> Value? {
            guard let text = try next(String?.self) else { return nil }
            guard let value = Value(rawValue: text) else {
                throw FerryError(.internalError, "The journal has '\(text)' as a transfer's \(column.rawValue).")
            }
            return value
        }
        let id: Int64 = try next()
        let session: String = try next()
        let url: String = try next()
        guard let state: TransferState = try enumeration(.state) else { throw FerryError(.internalError, "A transfer has no state.") }
        let folder: String = try next()
        self.init(session: session, url: url, folder: folder)
        self.id = id
        self.state = state
        suggestedName = try next()
        preferredName = try next()
        taskDescription = try next()
        nameHint = try next()
        fileName = try next()
        durableBytes = try next()
        totalBytes = try next()
        validator = try next()
        sha256 = try next()
        errorCode = try next()
        errorMessage = try next()
        attempts = try int()
        failures = try int()
        retryAt = try next()
        keepsPartFile = try next()
        createdAt = try next()
        updatedAt = try next()
        completedAt = try next()
        kind = try enumeration(.kind) ?? .download
        method = try next()
        sourcePath = try next()
        sourceIdentity = try next()
        formField = try next()
        uploadProtocol = try enumeration(.uploadProtocol)
        uploadURL = try next()
        responseStatus = try intIfPresent()
        responseHeaders = try next()
        responseBody = try next()
        options = try next()
        startAfter = try next()
        waitReason = try next()
        waitingSince = try next()
        waitsForNetwork = try next()
        segments = try next()
        mirrors = try next()
        directory = try next()
        outputName = try next()
        overwrite = try next()
        checksum = try next()
        serverDigest = try next()
        verifiedBy = try next()
        priority = try int()
        queueRank = try next()
        hidden = try next()
        requestedBy = try next()
        httpVersion = try next()
        member = try next()
    }
}
