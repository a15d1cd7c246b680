#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import Foundation
import GRDB

/// A transfer's columns written by hand, through statements prepared once: GRDB's Codable
/// encoding (a keyed container, a DateFormatter for each date) and its per-record statement
/// building were most of the cost of queueing many transfers and of every journaled change.
/// The values are exactly what the Codable encoding stores (`TransferRecordColumnsTests`).
extension TransferRecord {
    /// Every column but `id`, in the order of ``columnValues`` (and of ``Columns``).
    static let columns = Columns.allCases.dropFirst().map(\.rawValue)

    var columnValues: [(any DatabaseValueConvertible)?] {
        [
            session, url, state.rawValue, folder, suggestedName, preferredName, taskDescription, nameHint, fileName,
            durableBytes, totalBytes, validator, sha256, errorCode, errorMessage, attempts, failures, JournalDate(retryAt),
            keepsPartFile, JournalDate(createdAt), JournalDate(updatedAt), JournalDate(completedAt), kind.rawValue, method,
            sourcePath, sourceIdentity, formField, uploadProtocol?.rawValue, uploadURL, responseStatus, responseHeaders,
            responseBody, options, JournalDate(startAfter), waitReason, JournalDate(waitingSince), waitsForNetwork, segments,
            mirrors, directory, outputName, overwrite, checksum, serverDigest, verifiedBy, priority, queueRank, hidden, requestedBy,
            httpVersion,
        ]
    }

    package func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        for (column, value) in zip(Self.columns, columnValues) { container[column] = value }
    }

    static let insertSQL = "INSERT INTO transfer (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    static let updateSQL = "UPDATE transfer SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"

    /// Inserts the record (its `id` must be nil) and takes the new id.
    mutating func insertQuickly(_ db: Database) throws {
        try db.cachedStatement(sql: Self.insertSQL).execute(arguments: StatementArguments(columnValues))
        id = db.lastInsertedRowID
    }

    /// Writes every column of the record's row.
    func updateQuickly(_ db: Database) throws {
        try db.cachedStatement(sql: Self.updateSQL).execute(arguments: StatementArguments(columnValues + [id]))
    }
}

/// A date as GRDB stores one (`yyyy-MM-dd HH:mm:ss.SSS`, UTC, to the nearest millisecond), made
/// without a DateFormatter; nil stores NULL.
package struct JournalDate: DatabaseValueConvertible {
    var date: Date

    package init?(_ date: Date?) {
        guard let date else { return nil }
        self.date = date
    }

    var text: String {
        // As Foundation hands a date to ICU: milliseconds since 1970 from the reference date.
        let milliseconds = ((date.timeIntervalSinceReferenceDate + 978_307_200) * 1000).rounded()
        var seconds = time_t((milliseconds / 1000).rounded(.down))
        let millis = Int(milliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let year = Int(parts.tm_year) + 1900
        let yyyy = year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        let sss = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(yyyy)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(sss)"
    }

    package var databaseValue: DatabaseValue { text.databaseValue }

    package static func fromDatabaseValue(_ dbValue: DatabaseValue) -> JournalDate? {
        JournalDate(Date.fromDatabaseValue(dbValue))
    }
}
