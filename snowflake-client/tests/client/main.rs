//! The client's tests, linked once as one test binary (instead of one per file): the client
//! against the real server in this process (`client`), and the checked-in generated code
//! against what the server's `.proto` gives today (`generated`).

mod client;
mod generated;
