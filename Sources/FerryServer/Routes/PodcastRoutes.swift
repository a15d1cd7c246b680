import FerryCore
import FerryFeeds
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// `/v1/podcasts` and `/v1/episodes/{id}/download`: subscriptions, refresh, settings, episode downloads, OPML.
struct PodcastRoutes {
    let podcasts: PodcastLibrary

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("podcasts") { _, context in try jsonResponse(PodcastList(podcasts: try await podcasts.as(context.listener).podcasts())) }
        api.post("podcasts") { request, context in
            let body = try await request.decodeJSON(SubscribeRequest.self, context: context)
            let detail: PodcastDetail
            if let catalogId = body.catalogId {
                detail = try await podcasts.as(context.listener).subscribe(catalogId: catalogId)
            } else if let url = body.url {
                if body.password != nil, body.user == nil { throw FerryError.invalidRequest("A password goes with a 'user'.") }
                let credentials = body.user.map { FeedCredentials(user: $0, password: body.password ?? "") }
                detail = try await podcasts.as(context.listener).subscribe(url, credentials: credentials)
            } else {
                throw FerryError.invalidRequest("Give a feed or Apple Podcasts 'url', or a 'catalogId'.")
            }
            return try jsonResponse(detail, status: .created)
        }
        // Podping's announcements, passed on by a relay: `{"urls": […]}` or `?url=`.
        api.post("podcasts/ping") { request, context in
            var urls = request.uri.queryParameters.getAll("url").map { String($0) }
            if urls.isEmpty { urls = try await request.decodeJSON(FeedPing.self, context: context).urls }
            return try jsonResponse(try await podcasts.as(context.listener).ping(urls))
        }
        api.post("podcasts/refresh") { _, context in
            let (refreshed, added, errors) = await podcasts.as(context.listener).refreshAll()
            return try jsonResponse(
                RefreshResponse(
                    refreshed: refreshed, newEpisodes: added,
                    failures: errors.map { .init(podcastId: $0.key, error: $0.value.info) }.sorted { $0.podcastId < $1.podcastId }
                )
            )
        }
        api.post("podcasts/import") { request, context in
            let body = try await request.body.collect(upTo: 16 << 20)
            return try jsonResponse(try await podcasts.as(context.listener).importOPML(Data(body.readableBytesView)))
        }
        api.get("podcasts/export") { request, context in
            // The JSON export: subscriptions and bookmarks.
            if request.uri.queryParameters.get("format") == "json" {
                return try jsonResponse(try await podcasts.as(context.listener).exportJSON())
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/x-opml; charset=utf-8", .contentDisposition: #"attachment; filename="ferry-podcasts.opml""#],
                body: .init(byteBuffer: ByteBuffer(string: try await podcasts.as(context.listener).exportOPML()))
            )
        }
        api.get("podcasts/:id") { _, context in
            try jsonResponse(try await podcasts.as(context.listener).detail(try context.parameters.podcastID()))
        }
        api.patch("podcasts/:id") { request, context in
            let id = try context.parameters.podcastID()
            let body = try await request.decodeJSON(PodcastSettings.self, context: context)
            return try jsonResponse(
                try await podcasts.as(context.listener).update(
                    id, autoDownload: body.autoDownload, keepLatest: body.keepLatest, playbackSpeed: body.playbackSpeed, oldestFirst: body.oldestFirst,
                    refreshMinutes: body.refreshMinutes, enclosureChoice: body.enclosureChoice
                )
            )
        }
        api.delete("podcasts/:id") { request, context in
            let deleteFiles = request.uri.queryParameters.get("deleteFiles").map { $0 == "true" || $0 == "1" } ?? false
            try await podcasts.as(context.listener).unsubscribe(try context.parameters.podcastID(), deleteFiles: deleteFiles)
            return Response(status: .noContent)
        }
        api.post("podcasts/:id/refresh") { _, context in
            let id = try context.parameters.podcastID()
            let added = try await podcasts.as(context.listener).refresh(id)
            return try jsonResponse(RefreshResponse(refreshed: 1, newEpisodes: added.count, failures: []))
        }
        api.post("podcasts/:id/seen") { _, context in
            let id = try context.parameters.podcastID()
            try await podcasts.as(context.listener).markSeen(id)
            return try jsonResponse(try await podcasts.as(context.listener).detail(id))
        }
        api.post("episodes/:id/download") { request, context in
            guard let id = context.parameters.get("id").flatMap(Int64.init), id > 0 else {
                throw FerryError.invalidRequest("'\(context.parameters.get("id") ?? "")' is not an episode id.")
            }
            let body = try? await request.decodeJSON(EpisodeDownloadRequest.self, context: context)
            let session = body?.session ?? "web"
            try TransferEngine.validateSession(session)
            return try jsonResponse(try await podcasts.as(context.listener).download(episode: id, session: session), status: .created)
        }
    }
}

extension Parameters {
    /// The `:id` of an episode or a song.
    func mediaID(_ what: String) throws -> Int64 {
        let text = get("id") ?? ""
        guard let id = Int64(text), id > 0 else { throw FerryError.invalidRequest("'\(text.prefix(40))' is not \(what) id.") }
        return id
    }

    func podcastID() throws -> Int64 {
        let text = get("id") ?? ""
        guard let id = Int64(text), id > 0 else {
            throw FerryError.invalidRequest("'\(text.prefix(40))' is not a podcast id (see `ferry podcast ls`).")
        }
        return id
    }
}
