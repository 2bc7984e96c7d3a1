// Golden bytes of OffsetFetch v8 (API 9, many groups per request: KIP-709), DescribeShareGroupOffsets
// (API 90, v0 and v1) and AlterShareGroupOffsets (API 91, v0) (KIP-932) from the Kafka 4.3.1 client
// jars' own message classes. Run with:
// jshell --class-path "<kafka-4.3.1 libs/*.jar joined by :>" capture.jsh > golden.txt
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.*;
import org.apache.kafka.common.Uuid;
import java.util.*;
String hex(java.nio.ByteBuffer b) { StringBuilder s = new StringBuilder(); while (b.hasRemaining()) s.append(String.format("%02x", b.get())); return s.toString(); }
String enc(org.apache.kafka.common.protocol.Message m, short v) { var c = new ObjectSerializationCache(); int n = m.size(c, v); var b = java.nio.ByteBuffer.allocate(n); m.write(new ByteBufferAccessor(b), c, v); b.flip(); return hex(b); }
var topicId = new Uuid(0x0102030405060708L, 0x090a0b0c0d0e0f10L);

var ofReq = new OffsetFetchRequestData().setRequireStable(false).setGroups(List.of(
    new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g1").setTopics(List.of(
        new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("t1").setPartitionIndexes(List.of(0, 1)),
        new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("t\u00f8").setPartitionIndexes(List.of(2)))),
    new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g2").setTopics(null)));
System.out.println("OF_REQ8 " + enc(ofReq, (short)8));
var ofResp = new OffsetFetchResponseData().setThrottleTimeMs(5).setGroups(List.of(
    new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId("g1").setErrorCode((short)0).setTopics(List.of(
        new OffsetFetchResponseData.OffsetFetchResponseTopics().setName("t1").setPartitions(List.of(
            new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(0).setCommittedOffset(42L).setCommittedLeaderEpoch(3).setMetadata("m\u00e9ta").setErrorCode((short)0),
            new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(1).setCommittedOffset(-1L).setCommittedLeaderEpoch(-1).setMetadata(null).setErrorCode((short)0))),
        new OffsetFetchResponseData.OffsetFetchResponseTopics().setName("t\u00f8").setPartitions(List.of(
            new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(2).setCommittedOffset(7L).setCommittedLeaderEpoch(-1).setMetadata("").setErrorCode((short)29))))),
    new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId("g2").setErrorCode((short)16).setTopics(List.of())));
System.out.println("OF_RESP8 " + enc(ofResp, (short)8));

var dReq = new DescribeShareGroupOffsetsRequestData().setGroups(List.of(
    new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup().setGroupId("sg").setTopics(List.of(
        new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic().setTopicName("t1").setPartitions(List.of(0, 1)))),
    new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup().setGroupId("sg\u00e9").setTopics(null)));
for (short v = 0; v <= 1; v++) System.out.println("DSGO_REQ" + v + " " + enc(dReq, v));
var dResp = new DescribeShareGroupOffsetsResponseData().setThrottleTimeMs(9).setGroups(List.of(
    new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup().setGroupId("sg").setErrorCode((short)0).setErrorMessage(null).setTopics(List.of(
        new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic().setTopicName("t1").setTopicId(topicId).setPartitions(List.of(
            new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(0).setStartOffset(10L).setLeaderEpoch(0).setLag(40L).setErrorCode((short)0).setErrorMessage(null),
            new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(1).setStartOffset(-1L).setLeaderEpoch(-1).setLag(-1L).setErrorCode((short)0).setErrorMessage(null))))),
    new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup().setGroupId("sg\u00e9").setErrorCode((short)69).setErrorMessage("Group sg\u00e9 not found.").setTopics(List.of())));
for (short v = 0; v <= 1; v++) System.out.println("DSGO_RESP" + v + " " + enc(dResp, v));

var aReq = new AlterShareGroupOffsetsRequestData().setGroupId("sg").setTopics(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopicCollection(List.of(
    new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic().setTopicName("t1").setPartitions(List.of(
        new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition().setPartitionIndex(0).setStartOffset(10L),
        new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition().setPartitionIndex(1).setStartOffset(20L)))).iterator()));
System.out.println("ASGO_REQ0 " + enc(aReq, (short)0));
var aResp = new AlterShareGroupOffsetsResponseData().setThrottleTimeMs(0).setErrorCode((short)0).setErrorMessage(null).setResponses(new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopicCollection(List.of(
    new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic().setTopicName("t1").setTopicId(topicId).setPartitions(List.of(
        new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition().setPartitionIndex(0).setErrorCode((short)0).setErrorMessage(null),
        new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition().setPartitionIndex(1).setErrorCode((short)3).setErrorMessage("no such partition")))).iterator()));
System.out.println("ASGO_RESP0 " + enc(aResp, (short)0));
var aRefused = new AlterShareGroupOffsetsResponseData().setThrottleTimeMs(0).setErrorCode((short)68).setErrorMessage("The group is not empty.").setResponses(new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopicCollection());
System.out.println("ASGO_RESP0_REFUSED " + enc(aRefused, (short)0));
/exit
