//! gRPC health follows readiness through a real lease acquisition: `NOT_SERVING` (and
//! `UNAVAILABLE` for IDs) while the store does not answer, `SERVING` from when `/readyz` is 200,
//! then IDs; `NOT_SERVING` once the server drains.

use crate::common;

use std::time::Duration;

use common::{PrivateRedis, Server, agent, eventually, get};
use snowflake_server::grpc::pb::IssueRequest;
use snowflake_server::grpc::pb::snowflake_client::SnowflakeClient;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

#[test]
fn health_turns_serving_when_readyz_does() {
    let Some(mut redis) = PrivateRedis::not_started() else { return };
    let url = redis.url();
    let namespace = common::unique("grpc-health");
    let mut server = Server::start(&[
        "--id",
        "order=preset=leaf,epoch=2020-01-01",
        "--lease",
        &url,
        "--namespace",
        &namespace,
        "--lease-ttl",
        "2s",
        "--lease-reservation",
        "2s",
        "--lease-wait",
        "60s",
    ]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let channel =
        runtime.block_on(tonic::transport::Endpoint::from_shared(server.base.clone()).unwrap().connect()).unwrap();
    let health = || {
        let mut client = HealthClient::new(channel.clone());
        let request = HealthCheckRequest { service: "snowflake.v1.Snowflake".into() };
        runtime.block_on(client.check(request)).unwrap().into_inner().status
    };
    let issue = || {
        let mut client = SnowflakeClient::new(channel.clone());
        runtime.block_on(client.issue(IssueRequest { r#type: "order".into() }))
    };
    let agent = agent();
    assert_eq!(health(), ServingStatus::NotServing as i32);
    assert_eq!(issue().unwrap_err().code(), tonic::Code::Unavailable);

    redis.restart();
    // Each time it is asked, health says what /readyz says (within its 250 ms of following).
    eventually(Duration::from_secs(30), "ready once the store answers", || {
        let ready = get(&agent, &server.url("/readyz")).0 == 200;
        let serving = health() == ServingStatus::Serving as i32;
        (ready && serving).then_some(())
    });
    let id = issue().unwrap().into_inner();
    assert_eq!(id.text, id.id.to_string());
    // The client's connection goes with its runtime (one left open, never polled, would hold
    // up the graceful shutdown: HTTP/2's ends with a ping the client answers).
    drop(runtime);

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    common::delete_namespace(&url, &namespace);
}
