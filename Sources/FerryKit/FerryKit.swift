// FerryKit's model (transfers, podcasts, events, errors) lives in FerryModel, which the engine
// and the feed parser share without the client; a program that imports FerryKit sees it all.
@_exported import FerryModel
