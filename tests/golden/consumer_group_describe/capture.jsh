// Golden bytes of ConsumerGroupDescribe (API 69) from the Kafka 4.3.1 client jars. Run with:
// jshell --class-path "<kafka-4.3.1 libs/*.jar joined by :>" capture.jsh > golden.txt
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.*;
import org.apache.kafka.common.Uuid;
import java.util.*;
String hex(java.nio.ByteBuffer b) { StringBuilder s = new StringBuilder(); while (b.hasRemaining()) s.append(String.format("%02x", b.get())); return s.toString(); }
String enc(org.apache.kafka.common.protocol.Message m, short v) { var c = new ObjectSerializationCache(); int n = m.size(c, v); var b = java.nio.ByteBuffer.allocate(n); m.write(new ByteBufferAccessor(b), c, v); b.flip(); return hex(b); }
System.out.println("versions " + ConsumerGroupDescribeRequestData.LOWEST_SUPPORTED_VERSION + ".." + ConsumerGroupDescribeRequestData.HIGHEST_SUPPORTED_VERSION);
var req = new ConsumerGroupDescribeRequestData().setGroupIds(List.of("g1", "grp-\u00e9")).setIncludeAuthorizedOperations(false);
System.out.println("REQ0 " + enc(req, (short)0));
var tp = new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(new Uuid(0x0102030405060708L, 0x090a0b0c0d0e0f10L)).setTopicName("t1").setPartitions(List.of(0, 1));
var member = new ConsumerGroupDescribeResponseData.Member().setMemberId("m-1").setInstanceId(null).setRackId("r1").setMemberEpoch(5).setClientId("c").setClientHost("/127.0.0.1").setSubscribedTopicNames(List.of("t1")).setSubscribedTopicRegex(null).setAssignment(new ConsumerGroupDescribeResponseData.Assignment().setTopicPartitions(List.of(tp))).setTargetAssignment(new ConsumerGroupDescribeResponseData.Assignment());
var g1 = new ConsumerGroupDescribeResponseData.DescribedGroup().setErrorCode((short)0).setGroupId("g1").setGroupState("Stable").setGroupEpoch(5).setAssignmentEpoch(5).setAssignorName("uniform").setMembers(List.of(member));
var g2 = new ConsumerGroupDescribeResponseData.DescribedGroup().setErrorCode((short)69).setErrorMessage("Group grp-\u00e9 is not a consumer group.").setGroupId("grp-\u00e9").setGroupState("Dead").setGroupEpoch(-1).setAssignmentEpoch(-1).setAssignorName("");
var resp = new ConsumerGroupDescribeResponseData().setThrottleTimeMs(7).setGroups(List.of(g1, g2));
for (short v = ConsumerGroupDescribeResponseData.LOWEST_SUPPORTED_VERSION; v <= ConsumerGroupDescribeResponseData.HIGHEST_SUPPORTED_VERSION; v++) System.out.println("RESP" + v + " " + enc(resp, v));
/exit
